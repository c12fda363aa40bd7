/**
 * Unexpected errors inside the gateway. The gateway is built in this process (`createGateway` never
 * listens, so a test can give it its own dependencies) with parts that throw where nothing should:
 * the key store, the counters, the cursor codec, the listings client, the insights client, thrown
 * synchronously or as rejections. Each answer is exactly 500 `internal_error` (JSON, `Cache-Control:
 * no-store`, no `X-Powered-By`), with no stack, message or path of the error in it; the error is
 * logged for operators (without the key); and the gateway keeps answering.
 */
import { createHash } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import { createGateway, type AppDeps } from '../../gateway/app';
import { createCursorCodec } from '../../gateway/cursor/cursor-codec';
import { addressMatcher } from '../../gateway/keys/address-list';
import type { KeyRecord } from '../../gateway/keys/key-record';
import type { Counters } from '../../gateway/limits/counters';
import { createMemoryCounters } from '../../gateway/limits/memory-counters';
import { createMetrics } from '../../gateway/ops/metrics';
import { cursorSecret, expectError, expectKeyedSuccess, randomKeyValue, send, type Answer } from '../kit/gateway-stack';

const KEY_VALUE = randomKeyValue('errors');
const HASH = createHash('sha256').update(KEY_VALUE).digest('hex');
const RECORD: KeyRecord = {
  id: 'errors',
  keySha256: HASH,
  tier: 'advanced',
  countries: new Set(['GB']),
  addresses: addressMatcher(['127.0.0.1']),
  addressList: ['127.0.0.1'],
  status: 'active',
  limits: { perMinute: 1_000_000, perDay: 10_000_000, perMonth: 100_000_000 },
};
/** Text that would betray an internal error if it reached a caller. */
const INTERNAL = 'boom at /srv/gateway/secret-internal.js:42 (db-secret-host.internal)';

type Fault = 'none' | 'key-store-throws' | 'key-store-rejects' | 'counters-throw' | 'cursor-throws' | 'page-throws' | 'item-rejects' | 'insights-throws';
let fault: Fault = 'none';
const boom = (): never => {
  throw new TypeError(INTERNAL);
};

const logLines: string[] = [];
let server: http.Server;
let url: string;

beforeAll(async () => {
  const memory = createMemoryCounters();
  const counters: Counters = {
    consume: (id, limits, now) => (fault === 'counters-throw' ? boom() : memory.consume(id, limits, now)),
    peek: (id, limits, now) => memory.peek(id, limits, now),
    refund: (id, at) => memory.refund(id, at),
  };
  const codec = createCursorCodec({ encryptionSecret: cursorSecret(), ttlSeconds: 3600 });
  const listings = {
    async listPage() {
      if (fault === 'page-throws') boom();
      return { kind: 'page', items: Buffer.from(JSON.stringify([{ id: 'a-1', country: 'GB', listing_type: 'sale', property_type: 'house' }])), nextAfter: 'a-1' };
    },
    async getListing() {
      if (fault === 'item-rejects') await Promise.reject(new RangeError(INTERNAL));
      return { kind: 'item', item: { id: 'a-1', country: 'GB', listing_type: 'sale', property_type: 'house' } };
    },
    healthy: async () => true,
    close: async () => undefined,
  };
  const deps = {
    logger: pino({ level: 'info' }, { write: (line: string) => void logLines.push(line) }),
    metrics: createMetrics({ redis: false }),
    keyStore: {
      lookup(hash: string) {
        if (fault === 'key-store-throws') boom();
        if (fault === 'key-store-rejects') return Promise.reject(new Error(INTERNAL));
        return hash === HASH ? { kind: 'found', record: RECORD } : { kind: 'not_found' };
      },
    },
    counters,
    cursors: {
      issue: (...args: Parameters<typeof codec.issue>) => codec.issue(...args),
      open: (...args: Parameters<typeof codec.open>) => (fault === 'cursor-throws' ? boom() : codec.open(...args)),
    },
    stores: { forCountry: () => listings, all: () => new Map([['stub', listings]]), update: () => undefined, close: async () => undefined },
    insights: {
      configured: () => true,
      forward: async () => (fault === 'insights-throws' ? boom() : { kind: 'answer', body: { ok: true } }),
      update: () => undefined,
      close: async () => undefined,
    },
    trustedProxies: [],
  } as unknown as AppDeps;
  server = http.createServer(createGateway(deps));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server?.closeAllConnections();
  await new Promise<void>((resolve) => server?.close(() => resolve()));
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
