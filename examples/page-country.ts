/**
 * Pages through every published listing of one country with the typed client (client/) and prints
 * a summary: how many, by listing and property type, and the price range of each listing type.
 *
 *   npm start                                   # in another terminal: gateway and data service
 *   npx tsx examples/page-country.ts GB         # any country the key covers
 *
 * Environment: LISTINGS_BASE_URL (default http://127.0.0.1:8080), LISTINGS_API_KEY (default the
 * README's demo-advanced key, whose 600 requests a minute page a country without waiting; with
 * demo-standard's 60 the client waits out `rate_limited` and says so).
 */
import { ListingsApiError, ListingsClient, type CountryCode } from '../client/index'; // the sources; the packed build is listings-client

// The gateway checks the code (400 invalid_parameter for one it does not know): no need to here.
const country = (process.argv[2] ?? 'GB').toUpperCase() as CountryCode;
const client = new ListingsClient({
  baseUrl: process.env.LISTINGS_BASE_URL ?? 'http://127.0.0.1:8080',
  apiKey: process.env.LISTINGS_API_KEY ?? 'demo-advanced-3Lp8nW6tJ1',
  maxRetryWaitSeconds: 65,
  onRetry: ({ failure, waitMs }) => {
    const why = failure instanceof ListingsApiError ? `${failure.status} ${failure.error}` : failure.message;
    console.error(`  … ${why}: retrying in ${(waitMs / 1000).toFixed(1)} s`);
  },
});

const count = (map: Map<string, number>, key: string): void => void map.set(key, (map.get(key) ?? 0) + 1);

async function main(): Promise<void> {
  const started = Date.now();
  const byListingType = new Map<string, number>();
  const byPropertyType = new Map<string, number>();
  const prices = new Map<string, { min: number; max: number; sum: number; n: number; currency: string }>();
  let total = 0;
  let pages = 0;

  for await (const page of client.listProperties({ country, limit: 100 }).pages()) {
    pages++;
    for (const listing of page.data) {
      total++;
      count(byListingType, listing.listing_type);
      count(byPropertyType, listing.property_type);
      if (typeof listing.price === 'number') {
        const p = prices.get(listing.listing_type) ?? { min: Infinity, max: -Infinity, sum: 0, n: 0, currency: listing.currency ?? '' };
        p.min = Math.min(p.min, listing.price);
        p.max = Math.max(p.max, listing.price);
        p.sum += listing.price;
        p.n++;
        prices.set(listing.listing_type, p);
      }
    }
  }

  const money = (n: number, currency: string): string => `${Math.round(n).toLocaleString('en-GB')}${currency ? ` ${currency}` : ''}`;
  const share = (n: number): string => `${n.toLocaleString('en-GB')} (${total ? ((100 * n) / total).toFixed(1) : '0.0'}%)`;
  console.log(`${country}: ${total.toLocaleString('en-GB')} published listings in ${pages} pages (${((Date.now() - started) / 1000).toFixed(1)} s)`);
  console.log('by listing type:');
  for (const [type, n] of [...byListingType].sort()) console.log(`  ${type.padEnd(12)} ${share(n)}`);
  console.log('by property type:');
  for (const [type, n] of [...byPropertyType].sort()) console.log(`  ${type.padEnd(12)} ${share(n)}`);
  console.log('price range:');
  for (const [type, p] of [...prices].sort()) {
    console.log(`  ${type.padEnd(12)} ${money(p.min, p.currency)} – ${money(p.max, p.currency)}, mean ${money(p.sum / p.n, p.currency)} (${p.n.toLocaleString('en-GB')} priced)`);
  }
}

main().catch((err: unknown) => {
  if (err instanceof ListingsApiError) {
    console.error(`${err.status} ${err.error}: ${err.message}${err.ip ? ` (the service sees ${err.ip})` : ''}${err.retryAfter ? ` (retry after ${err.retryAfter} s)` : ''}`);
  } else {
    console.error(err instanceof Error ? err.message : err);
  }
  process.exitCode = 1;
});
