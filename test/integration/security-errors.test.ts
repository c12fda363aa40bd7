/**
 * Unexpected errors inside the gateway. The gateway is built in this process (`createGateway` never
 * listens, so a test can give it its own dependencies) with parts that throw where nothing should:
 * the key store, the counters, the cursor codec, the listings client, the insights client, thrown
 * synchronously or as rejections. Each answer is exactly 500 `internal_error` (JSON, `Cache-Control:
 * no-store`, no `X-Powered-By`), with no stack, message or path of the error in it; the error is
 * logged for operators (without the key); and the gateway keeps answering.
 */
import type { Counters } from '../../gateway/limits/counters';
import type { InsightsUpstream } from '../../gateway/upstream/insights-client';
import type { ListingStores } from '../../gateway/upstream/listing-stores';
import type { ListingsClient } from '../../gateway/upstream/listings-client';
import { expectError, expectKeyedSuccess, randomKeyValue, removeTempDirs, send, UNLIMITED, type Answer } from '../kit/gateway-stack';
import { buildGateway, type InProcessGateway } from '../kit/in-process';

const KEY_VALUE = randomKeyValue('errors');
/** Text that would betray an internal error if it reached a caller. */
const INTERNAL = 'boom at /srv/gateway/secret-internal.js:42 (db-secret-host.internal)';

type Fault = 'none' | 'key-store-throws' | 'key-store-rejects' | 'counters-throw' | 'cursor-throws' | 'page-throws' | 'item-rejects' | 'insights-throws';
let fault: Fault = 'none';
const boom = (): never => {
  throw new TypeError(INTERNAL);
};

let gateway: InProcessGateway;
let logLines: string[];
let url: string;

/** The built parts, each wrapped to throw (or reject) when its fault is set. */
function faulty(built: { keyStore: InProcessGateway['deps']['keyStore']; counters: Counters; cursors: InProcessGateway['deps']['cursors']; stores: ListingStores }) {
  const store = built.stores.forCountry('GB')!;
  const listings: ListingsClient = {
    listPage: async (request, ctx) => (fault === 'page-throws' ? boom() : store.listPage(request, ctx)),
    getListing: async (country, id, ctx) => {
      if (fault === 'item-rejects') await Promise.reject(new RangeError(INTERNAL));
      return store.getListing(country, id, ctx);
    },
    healthy: (ctx) => store.healthy(ctx),
    close: () => store.close(),
  };
  const insights: InsightsUpstream = {
    configured: () => true,
    forward: async () => (fault === 'insights-throws' ? boom() : { kind: 'answer', body: { ok: true } }),
    update: () => undefined,
    close: async () => undefined,
  };
  return {
    keyStore: {
      lookup(hash: string) {
        if (fault === 'key-store-throws') boom();
        if (fault === 'key-store-rejects') return Promise.reject(new Error(INTERNAL));
        return built.keyStore.lookup(hash);
      },
    },
    counters: {
      consume: (id, limits, now) => (fault === 'counters-throw' ? boom() : built.counters.consume(id, limits, now)),
      peek: (id, limits, now) => built.counters.peek(id, limits, now),
      refund: (id, at) => built.counters.refund(id, at),
    } satisfies Counters,
    cursors: {
      issue: (...args: Parameters<typeof built.cursors.issue>) => built.cursors.issue(...args),
      open: (...args: Parameters<typeof built.cursors.open>) => (fault === 'cursor-throws' ? boom() : built.cursors.open(...args)),
    },
    stores: { ...built.stores, forCountry: () => listings },
    insights,
  };
}

beforeAll(async () => {
  gateway = await buildGateway({
    keys: [{ id: 'errors', value: KEY_VALUE, tier: 'advanced', countries: ['GB'], address: '127.0.0.1', status: 'active', limits: UNLIMITED }],
    listings: [{ id: 'a-1', country: 'GB', listing_type: 'sale', property_type: 'house' }],
    override: faulty,
  });
  logLines = gateway.logLines;
  url = gateway.url;
});
afterAll(async () => {
  await gateway?.close();
  removeTempDirs();
});
beforeEach(() => {
  fault = 'none';
});

const get = (path: string): Promise<Answer> => send(url, path, { headers: { 'x-api-key': KEY_VALUE } });

describe('a forced internal throw', () => {
  const CASES: Array<[Fault, string]> = [
    ['key-store-throws', '/v1/ping'],
    ['key-store-rejects', '/v1/properties?country=GB'],
    ['counters-throw', '/v1/ping'],
    ['cursor-throws', '/v1/properties?country=GB&cursor=abc.def'],
    ['page-throws', '/v1/properties?country=GB'],
    ['item-rejects', '/v1/properties/a-1?country=GB'],
    ['insights-throws', '/v1/insights/market'],
  ];

  test('controls: without a fault every path answers', async () => {
    expectKeyedSuccess(await get('/v1/ping'));
    expectKeyedSuccess(await get('/v1/properties?country=GB'));
    expectKeyedSuccess(await get('/v1/properties/a-1?country=GB'));
    expectKeyedSuccess(await get('/v1/insights/market'));
  });

  test.each(CASES)('%s (%s) → exactly 500 internal_error, nothing of the error in the answer', async (f, path) => {
    fault = f;
    const before = logLines.length;
    const a = await get(path);
    expectError(a, 'internal_error');
    expect(a.body.message).toBe('An unexpected error occurred.');
    for (const leak of ['boom', '/srv/', 'secret', 'TypeError', 'RangeError', ' at ', 'node:']) expect(a.text).not.toContain(leak);
    // Logged for operators, with what went wrong, and never with the key.
    const logged = logLines.slice(before).join('\n');
    expect(logged).toContain('boom at /srv/gateway/secret-internal.js');
    expect(logged).not.toContain(KEY_VALUE);
  });

  test('a key pasted into the path is not logged with the unexpected error (thrown before the key-in-path check)', async () => {
    fault = 'key-store-throws';
    const before = logLines.length;
    expectError(await get(`/v1/properties/${KEY_VALUE}?country=GB`), 'internal_error');
    const logged = logLines.slice(before).join('\n');
    expect(logged).toContain('unexpected error');
    expect(logged).not.toContain(KEY_VALUE);
  });

  test('the gateway keeps answering afterwards, and no log line holds the key', async () => {
    expectKeyedSuccess(await get('/v1/properties?country=GB'));
    expect(logLines.join('\n')).not.toContain(KEY_VALUE);
  });
});
