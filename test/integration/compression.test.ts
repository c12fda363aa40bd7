/**
 * Compression (docs/observing.md): /v1 answers, /v1/openapi.json and the reference assets per
 * Accept-Encoding (br, gzip, zstd where the runtime has it), from 1,024 bytes up, with
 * `Vary: Accept-Encoding` on every 200 page, listing or document; quality values, `identity;q=0`
 * and `*`; small errors never compressed; a compressed page counted once and logged once.
 * Requests are made with node:http, which does not decode: the test sees the bytes sent.
 */
import http from 'node:http';
import zlib from 'node:zlib';
import { HAS_ZSTD } from '../../gateway/compression/codecs';
import { zstd } from '../../gateway/compression/zstd';
import { fixtureListings, sampleIds } from '../fixtures/listings';
import { randomKeyValue, eventually, startStack, type Stack } from '../kit/gateway-stack';
import { accessLines } from '../kit/log-lines';

const LISTINGS = fixtureListings();
/** A last page (next_cursor null), so every request for it answers the same bytes. */
const LAST_PAGE = '/v1/properties?country=GB&listing_type=sale&property_type=house&limit=100';
const VALUE = randomKeyValue('compress');
let stack: Stack;

interface Raw {
  status: number;
  headers: http.IncomingHttpHeaders;
  bytes: Buffer;
}

function rawGet(path: string, headers: Record<string, string> = {}): Promise<Raw> {
  const url = new URL(stack.url);
  return new Promise((resolve, reject) => {
    const req = http.get({ host: url.hostname, port: url.port, path, headers: { 'x-api-key': VALUE, ...headers }, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, bytes: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('error', reject);
  });
}

const zstdDecompress = (b: Buffer): Buffer => zstd.zstdDecompressSync!(b);
const DECODE: Record<string, (b: Buffer) => Buffer> = { br: zlib.brotliDecompressSync, gzip: zlib.gunzipSync, zstd: zstdDecompress };
const codings = HAS_ZSTD ? ['br', 'gzip', 'zstd'] : ['br', 'gzip'];

beforeAll(async () => {
  stack = await startStack({ keys: [{ id: 'compress', value: VALUE, tier: 'standard', countries: ['GB', 'FR'], address: '127.0.0.1', status: 'active' }], listings: LISTINGS });
});
afterAll(async () => {
  await stack?.stop();
});

test('each coding decodes to the identity bytes; Vary on the compressed and the uncompressed page', async () => {
  const identity = await rawGet(LAST_PAGE);
  expect(identity.status).toBe(200);
  expect(identity.headers['content-encoding']).toBeUndefined();
  expect(identity.headers.vary).toBe('Accept-Encoding');
  expect(identity.bytes.length).toBeGreaterThan(1024);
  expect(JSON.parse(identity.bytes.toString()).next_cursor).toBeNull();
  for (const coding of codings) {
    const answer = await rawGet(LAST_PAGE, { 'accept-encoding': coding });
    expect([coding, answer.headers['content-encoding']]).toEqual([coding, coding]);
    expect(answer.headers.vary).toBe('Accept-Encoding');
    expect(Number(answer.headers['content-length'])).toBe(answer.bytes.length);
    expect(answer.bytes.length).toBeLessThan(identity.bytes.length / 2);
    expect(DECODE[coding]!(answer.bytes).equals(identity.bytes)).toBe(true);
  }
});

test.each([
  ['gzip;q=0.2, br;q=0.8', 'br'],
  ['br;q=0, gzip', 'gzip'],
  // Equal weights: the server's order (zstd where the runtime has it, br, gzip: codecs.ts).
  ['*', HAS_ZSTD ? 'zstd' : 'br'],
  ['gzip, deflate, br, zstd', HAS_ZSTD ? 'zstd' : 'br'],
  ['gzip, br', 'br'],
  ['*;q=0.5, gzip;q=0', HAS_ZSTD ? 'zstd' : 'br'],
  ['*;q=0.5, zstd;q=0', 'br'],
  ['*;q=0.5, gzip;q=0, br;q=0', HAS_ZSTD ? 'zstd' : undefined],
  ['gzip;q=0.5, identity', undefined],
  ['identity', undefined],
  ['br;q=0, gzip;q=0', undefined],
  ['', undefined],
  ['GZIP;Q=1', 'gzip'],
])('Accept-Encoding %j on a page: %s', async (accept, expected) => {
  const answer = await rawGet(LAST_PAGE, { 'accept-encoding': accept });
  expect(answer.status).toBe(200);
  expect(answer.headers['content-encoding']).toBe(expected);
  expect(answer.headers.vary).toBe('Accept-Encoding');
});

test('under 1,024 bytes a listing goes uncompressed (with Vary), unless the caller refuses identity', async () => {
  const id = sampleIds(LISTINGS).publishedGb;
  const small = await rawGet(`/v1/properties/${id}?country=GB`, { 'accept-encoding': 'br, gzip' });
  expect(small.status).toBe(200);
  expect(small.bytes.length).toBeLessThan(1024);
  expect(small.headers['content-encoding']).toBeUndefined();
  expect(small.headers.vary).toBe('Accept-Encoding');
  const refused = await rawGet(`/v1/properties/${id}?country=GB`, { 'accept-encoding': 'gzip;q=0.5, identity;q=0' });
  expect(refused.headers['content-encoding']).toBe('gzip');
  expect(zlib.gunzipSync(refused.bytes).equals(small.bytes)).toBe(true);
});

test('errors are not compressed and carry no Vary', async () => {
  for (const [path, headers, status] of [
    [LAST_PAGE, { 'x-api-key': 'wrong' }, 401],
    ['/v1/properties?country=XX', {}, 400],
    ['/v1/nowhere', {}, 404],
  ] as const) {
    const answer = await rawGet(path, { ...headers, 'accept-encoding': 'br, gzip, identity;q=0' });
    expect(answer.status).toBe(status);
    expect(answer.headers['content-encoding']).toBeUndefined();
    expect(answer.headers.vary).toBeUndefined();
    expect(typeof JSON.parse(answer.bytes.toString()).error).toBe('string');
  }
});

test('a compressed page is counted once and logged once, with its coding and both sizes', async () => {
  const before = await rawGet(LAST_PAGE);
  const remaining = (a: Raw): number => Number(/r=(\d+)/.exec(String(a.headers.ratelimit))![1]);
  const compressed = await rawGet(LAST_PAGE, { 'accept-encoding': 'br', 'x-request-id': 'compressed-once' });
  expect(compressed.headers['content-encoding']).toBe('br');
  expect(remaining(compressed)).toBe(remaining(before) - 1);
  await eventually('the answer logged', () => accessLines(stack.gateway.output).some((l) => l.req.id === 'compressed-once'));
  const lines = accessLines(stack.gateway.output).filter((l) => l.req.id === 'compressed-once');
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatchObject({ encoding: 'br', bytes: before.bytes.length, sent_bytes: compressed.bytes.length });
  const plain = accessLines(stack.gateway.output).find((l) => l.req.id === before.headers['x-request-id']);
  expect(plain).toMatchObject({ encoding: 'identity', bytes: before.bytes.length, sent_bytes: before.bytes.length });
});

test('the OpenAPI document and the reference assets: compressed from the first ask, identical once decoded, weak ETags on the compressed forms', async () => {
  for (const path of ['/v1/openapi.json', '/docs', '/docs/assets/swagger-ui.css', '/docs/assets/swagger-ui-bundle.js']) {
    const identity = await rawGet(path);
    expect(identity.status).toBe(200);
    expect(identity.headers.vary).toBe('Accept-Encoding');
    for (const coding of codings) {
      // The first ask of each coding: made at start-up (the bundle: at the per-request level until its smallest form is ready).
      const answer = await rawGet(path, { 'accept-encoding': coding });
      expect([path, answer.headers['content-encoding']]).toEqual([path, coding]);
      expect(answer.headers.vary).toBe('Accept-Encoding');
      expect(DECODE[coding]!(answer.bytes).equals(identity.bytes)).toBe(true);
      if (identity.headers.etag) {
        // The asset's validator, weak: a revalidation matches whichever form the client holds.
        expect(answer.headers.etag).toBe(`W/${identity.headers.etag}`);
        expect((await rawGet(path, { 'accept-encoding': coding, 'if-none-match': answer.headers.etag! })).status).toBe(304);
        expect((await rawGet(path, { 'accept-encoding': coding, 'if-none-match': identity.headers.etag })).status).toBe(304);
        expect((await rawGet(path, { 'if-none-match': answer.headers.etag! })).status).toBe(304);
      }
    }
  }
}, 120_000);
