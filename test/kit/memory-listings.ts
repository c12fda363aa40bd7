/**
 * The memory twins of the gateway's upstreams, for an in-process gateway: a listing store holding
 * listings in memory (paged by id, withdrawn ones never served, as the data service does) and an
 * insights area that is not configured. `failing` makes every call answer `unavailable` (the data
 * service saying 503), to tell "refused before the data service" from "refused by it".
 */
import type { StoreRoutes } from '../../gateway/config/gateway-config';
import type { InsightsUpstream } from '../../gateway/upstream/insights-client';
import type { ListingStores } from '../../gateway/upstream/listing-stores';
import { publicListing, type ItemResult, type ListingsClient, type PageResult } from '../../gateway/upstream/listings-client';

/** A listing as the data service stores it (any further fields pass through). */
export interface StoredListing {
  readonly id: string;
  readonly country: string;
  readonly listing_type?: string;
  readonly property_type?: string;
  readonly withdrawn?: boolean;
}

export interface MemoryListings extends ListingsClient {
  /** While true, every call answers as a data service saying 503. */
  failing: boolean;
  /** Calls made to the store (a refusal before the data service leaves it unchanged). */
  calls: number;
}

export function createMemoryListings(listings: readonly StoredListing[]): MemoryListings {
  const published = listings.filter((l) => l.withdrawn !== true).sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  const store: MemoryListings = {
    failing: false,
    calls: 0,
    async listPage(request): Promise<PageResult> {
      store.calls++;
      if (store.failing) return { kind: 'unavailable' };
      const matching = published.filter((l) =>
        l.country === request.country &&
        (request.listingType === undefined || l.listing_type === request.listingType) &&
        (request.propertyType === undefined || l.property_type === request.propertyType) &&
        (request.after === undefined || l.id > request.after));
      const page = matching.slice(0, request.limit);
      const nextAfter = matching.length > request.limit ? page[page.length - 1]!.id : null;
      return { kind: 'page', items: Buffer.from(JSON.stringify(page.map((l) => publicListing({ ...l })))), nextAfter };
    },
    async getListing(country, id): Promise<ItemResult> {
      store.calls++;
      if (store.failing) return { kind: 'unavailable' };
      const found = published.find((l) => l.country === country && l.id === id);
      return found ? { kind: 'item', item: publicListing({ ...found }) } : { kind: 'not_found' };
    },
    healthy: async () => !store.failing,
    close: async () => undefined,
  };
  return store;
}

/** One store serving every country. Its routes are fixed: `update` refuses (no reload in process). */
export function singleStore(store: ListingsClient): ListingStores {
  const all = new Map([['memory:', store]]);
  return {
    forCountry: () => store,
    all: () => all,
    update(_routes: StoreRoutes) {
      throw new Error('the in-process gateway has one fixed listing store');
    },
    close: () => store.close(),
  };
}

/** The insights area switched off (the gateway answers 503 `not_configured`). */
export function insightsNotConfigured(): InsightsUpstream {
  return {
    configured: () => false,
    forward: async () => ({ kind: 'unavailable' }),
    update(url) {
      if (url !== undefined) throw new Error('the in-process gateway has no insights service');
    },
    close: async () => undefined,
  };
}
