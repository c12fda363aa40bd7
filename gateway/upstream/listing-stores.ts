// gateway/upstream/: calls to the data service: listing stores and the insights client (undici pools), outcomes
// as values and their error table, caller identity, pages passed on as written.
import type { StoreRoutes } from '../config/gateway-config';
import { createListingsClient, type ListingsClient } from './listings-client';

export interface ListingStores {
  /** The client of the store serving `country`, or undefined when none is configured. */
  forCountry(country: string): ListingsClient | undefined;
  /** Every configured store, by base URL (readiness checks). */
  all(): ReadonlyMap<string, ListingsClient>;
  /** Applies new routes (hot reload): new stores get a pool, removed ones are closed after in-flight calls. */
  update(routes: StoreRoutes): void;
  close(): Promise<void>;
}

/** Pools of a removed store stay open this long so requests already using them can finish. */
const RETIRE_AFTER_MS = 30_000;

/**
 * The listing stores, one pooled client per distinct base URL, routed by country. Routing is a
 * map look-up per request; the map is swapped whole on reload, so a request sees old or new routes,
 * never a mix.
 */
export function createListingStores(routes: StoreRoutes, timeoutMs: number): ListingStores {
  const clients = new Map<string, ListingsClient>();
  let byCountry = new Map<string, ListingsClient>();
  let fallback: ListingsClient | undefined;
  const retiring = new Map<ReturnType<typeof setTimeout>, ListingsClient>();

  const clientFor = (url: string): ListingsClient => {
    let client = clients.get(url);
    if (!client) {
      client = createListingsClient({ baseUrl: url, timeoutMs });
      clients.set(url, client);
    }
    return client;
  };

  function apply(next: StoreRoutes): void {
    byCountry = new Map(Object.entries(next.byCountry).map(([country, url]) => [country, clientFor(url)]));
    fallback = next.defaultUrl ? clientFor(next.defaultUrl) : undefined;
    const used = new Set([...Object.values(next.byCountry), ...(next.defaultUrl ? [next.defaultUrl] : [])]);
    for (const [url, client] of clients) {
      if (used.has(url)) continue;
      clients.delete(url);
      const timer = setTimeout(() => {
        retiring.delete(timer);
        void client.close();
      }, RETIRE_AFTER_MS);
      timer.unref();
      retiring.set(timer, client);
    }
  }
  apply(routes);

  return {
    forCountry: (country) => byCountry.get(country) ?? fallback,
    all: () => clients,
    update: apply,
    async close() {
      for (const timer of retiring.keys()) clearTimeout(timer);
      await Promise.all([...clients.values(), ...retiring.values()].map((c) => c.close()));
    },
  };
}
