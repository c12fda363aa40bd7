/**
 * Bad input, against a gateway whose data service (and insights service) is a stub that records
 * every request it receives, so the test sees not only the answer but what got through.
 *
 * - Seeded fast-check runs over query strings (Unicode names and values, duplicates, `__proto__`,
 *   `a[b]`, bad percent-escapes, up to thousands of parameters), paths and headers: the answer is
 *   200 or a 4xx with a catalogued code; on a 200 the data service received exactly one request,
 *   with only allow-listed, well-formed parameters and headers; on a 4xx it received nothing.
 *   (gateway-fuzz.test.ts holds the answer shape against the real data service; this adds what
 *   reaches upstream.)
 * - Thousands of parameters, oversized values, URLs and header blocks: a 4xx, fast, no crash.
 * - Traversal and odd paths: 404, never reaching an upstream (listings and insights).
 *
 * `limit` edge cases (`1e1`, `0x10`, ` 5`, `5.0`, `-1`, huge) are held by gateway-surface.test.ts.
 */
import fc from 'fast-check';
import net from 'node:net';
import { stringify } from 'yaml';
import {
  UNLIMITED,
  DEFAULT_TIERS,
  ERROR_CATALOGUE,
  expectError,
  expectKeyedSuccess,
  makeTempDir,
  randomKeyValue,
  removeTempDirs,
  send,
  startGateway,
  writeKeysFile,
  writeTempFile,
  type Answer,
  type ErrorCode,
  type KeySpec,
  type Proc,
} from '../kit/gateway-stack';
import { startStubUpstream, type StubUpstream, type UpstreamRequest } from '../kit/stub-upstream';

const SEED = Number(process.env.FUZZ_SEED ?? 20_261_207);
const RUNS = Number(process.env.FUZZ_RUNS ?? 400);

const KEYS: KeySpec[] = [
  { id: 'std', value: randomKeyValue('std'), tier: 'standard', countries: ['GB', 'FR'], address: '127.0.0.1', status: 'active', limits: UNLIMITED },
  { id: 'adv', value: randomKeyValue('adv'), tier: 'advanced', countries: ['GB'], address: '127.0.0.1', status: 'active', limits: UNLIMITED },
];
const STD = KEYS[0]!.value;
const ADV = KEYS[1]!.value;

let stub: StubUpstream;
let gateway: Proc;
let cursor: string;

beforeAll(async () => {
  stub = await startStubUpstream();
  const dir = makeTempDir();
  const keysFile = writeKeysFile(KEYS, dir);
  const gatewayConfig = writeTempFile('gateway.yaml', stringify({ tiers: DEFAULT_TIERS, insights: { upstream: `${stub.url}/insights-api` } }), dir);
  gateway = await startGateway({ backendUrl: stub.url, keysFile, gatewayConfig });
  // A real cursor (the stub's next position is "pos-3"), valid with country=GB and no other filter.
  const first = await send(gateway.url, '/v1/properties?country=GB&limit=3', { headers: { 'x-api-key': STD } });
  expectKeyedSuccess(first);
  cursor = first.body.next_cursor;
}, 30_000);

afterAll(async () => {
  await gateway?.stop();
  await stub?.close();
  removeTempDirs();
});

let sequence = 0;
const nextRequestId = (): string => `sec-in-${++sequence}`;

/** Headers the gateway may send upstream: its own, never the caller's (x-page-format: the page format it asks for). */
const UPSTREAM_HEADERS = new Set(['host', 'accept', 'accept-encoding', 'x-request-id', 'connection', 'x-page-format']);
const UPSTREAM_LIST_PARAMETERS = new Set(['country', 'listing_type', 'property_type', 'limit', 'after']);
const ENTITLED = new Set(['GB', 'FR']);

/** What reached the data service for an answered request: one call, allow-listed and well-formed. */
function checkUpstream(r: UpstreamRequest, path: string): string | undefined {
  for (const name of Object.keys(r.headers)) if (!UPSTREAM_HEADERS.has(name)) return `header ${name} forwarded`;
  if (r.headers['x-page-format'] !== undefined && r.headers['x-page-format'] !== 'public-array') return 'x-page-format forwarded';
  if (r.headers['accept-encoding'] !== 'identity') return `accept-encoding ${String(r.headers['accept-encoding'])} (the gateway's is identity)`;
  if (r.method !== 'GET') return `method ${r.method}`;
  if (path.startsWith('/v1/properties/')) {
    const m = /^\/internal\/v1\/listings\/([A-Z]{2})\/([^/?]+)$/.exec(r.url);
    if (!m) return `item call ${r.url}`;
    if (!ENTITLED.has(m[1]!)) return `country ${m[1]}`;
    const id = decodeURIComponent(m[2]!);
    if (!/^[A-Za-z0-9._~-]{1,128}$/.test(id) || id === '.' || id === '..') return `id ${id}`;
    return undefined;
  }
  if (r.path !== '/internal/v1/listings') return `list call ${r.url}`;
  const seen = new Set<string>();
  for (const [name, value] of r.query) {
    if (!UPSTREAM_LIST_PARAMETERS.has(name)) return `parameter ${name} forwarded`;
    if (seen.has(name)) return `parameter ${name} twice`;
    seen.add(name);
    const ok =
      name === 'country' ? ENTITLED.has(value)
      : name === 'listing_type' ? ['sale', 'rent'].includes(value)
      : name === 'property_type' ? ['apartment', 'house', 'land', 'commercial'].includes(value)
      : name === 'limit' ? /^(?:[1-9][0-9]?|100)$/.test(value)
      : value === 'pos-3';
    if (!ok) return `${name}=${value}`;
  }
  if (!seen.has('country') || !seen.has('limit')) return `country or limit missing: ${r.url}`;
  return undefined;
}

/** Throws unless the answer is a 200 or a catalogued 4xx, and upstream saw exactly what it should. */
function checkExchange(request: string, path: string, id: string, a: Answer): void {
  const fail = (why: string): never => {
    throw new Error(`${why}\nrequest: ${request}\nanswer: ${a.status} ${a.text.slice(0, 300)}\nupstream: ${JSON.stringify(stub.byRequestId(id).map((r) => r.url))}`);
  };
  if (a.headers['x-powered-by'] !== undefined) fail('X-Powered-By');
  const upstream = stub.byRequestId(id);
  if (a.status === 200) {
    if (path.startsWith('/v1/ping')) {
      if (upstream.length) fail('ping reached the data service');
      return;
    }
    if (upstream.length !== 1) fail(`${upstream.length} upstream requests for one answer`);
    const problem = checkUpstream(upstream[0]!, path);
    if (problem) fail(`upstream: ${problem}`);
    return;
  }
  if (a.status < 400 || a.status >= 500) fail('neither 200 nor 4xx');
  if (upstream.length) fail('a refused request reached the data service');
  if (!/^application\/json/.test(a.headers['content-type'] ?? '')) fail('error not JSON');
  const code = a.body?.error as ErrorCode;
  if (!(code in ERROR_CATALOGUE) || ERROR_CATALOGUE[code].status !== a.status) fail(`code ${String(code)} for ${a.status}`);
  if (typeof a.body.message !== 'string') fail('message');
  for (const field of Object.keys(a.body)) if (!['error', 'message', 'parameter', 'ip'].includes(field)) fail(`field ${field}`);
  if (a.headers['cache-control'] !== 'no-store') fail('Cache-Control');
}

// --- generators -------------------------------------------------------------------------------

const UNRESERVED = /[A-Za-z0-9\-._~]/;
const pct = (s: string): string =>
  [...Buffer.from(s, 'utf8')].map((b) => (UNRESERVED.test(String.fromCharCode(b)) ? String.fromCharCode(b) : `%${b.toString(16).toUpperCase().padStart(2, '0')}`)).join('');
const raw = (s: string): string => [...s].map((c) => (/^[\x21-\x7e]$/.test(c) && c !== '#' ? c : pct(c))).join('');
const form = (s: string): string => s.split(' ').map(pct).join('+');
const twice = (s: string): string => pct(s).replace(/%/g, '%25');
const ENCODERS = { pct, raw, form, twice } as const;

const nameArb = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom('country', 'listing_type', 'property_type', 'limit', 'cursor') },
  {
    weight: 3,
    arbitrary: fc.constantFrom('after', '__proto__', 'constructor', 'prototype', 'toString', 'a[b]', 'country[]', 'country[0]', '__proto__[country]', 'country.x', 'Country', 'COUNTRY', 'country ', ' country', 'country\u0000', 'countr\u00fd', 'c\u200bountry', '', 'api_key', 'x-api-key', 'limit[]', 'after[]'),
  },
  { weight: 2, arbitrary: fc.string({ unit: 'grapheme', maxLength: 10 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 6 }) },
);

const valueArb = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom('GB', 'gb', 'Gb', 'FR', 'DE', 'XX', 'sale', 'rent', 'house', 'land', 'apartment', 'commercial', '1', '20', '100', '101', '0', '05', '1e1', '0x10', ' 5', '5.0', '-1', '99999999999999999999') },
  { weight: 2, arbitrary: fc.constant('<cursor>') },
  { weight: 3, arbitrary: fc.constantFrom('', '%', '%%', '%zz', '%E0%A4', '%C0%AF', '%00', '%FF', 'a%', '%2', '+', ' ', '&', '=', '[]', '{}', 'null', '__proto__', 'pos-3', '../x', 'GB&after=x', 'GB%26after%3Dx', 'é', '🏠', '\u202e', 'G\u0042', 'ＧＢ', 'a'.repeat(2000)) },
  { weight: 2, arbitrary: fc.string({ unit: 'grapheme', maxLength: 12 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 8 }) },
);

const pairArb = fc.record({ name: nameArb, value: valueArb, withEquals: fc.boolean(), encoding: fc.constantFrom<keyof typeof ENCODERS>('pct', 'raw', 'form', 'twice') });

const render = (pairs: Array<{ name: string; value: string; withEquals: boolean; encoding: keyof typeof ENCODERS }>, separator: string): string =>
  pairs
    .map((p) => {
      const enc = ENCODERS[p.encoding];
      const value = p.value === '<cursor>' ? cursor : p.value;
      return p.withEquals ? `${enc(p.name)}=${p.value === '<cursor>' ? value : enc(value)}` : enc(p.name);
    })
    .join(separator);

const countryGB = { name: 'country', value: 'GB', withEquals: true, encoding: 'pct' as const };
const queryArb = fc
  .oneof(
    { weight: 5, arbitrary: fc.array(pairArb, { maxLength: 6 }) },
    // A valid base with one to three more parameters (often valid ones, sometimes repeated).
    { weight: 5, arbitrary: fc.array(pairArb, { maxLength: 3 }).map((extra) => [countryGB, ...extra]) },
    { weight: 1, arbitrary: fc.array(pairArb, { minLength: 50, maxLength: 300 }) },
    // Thousands of parameters: the same one, or many different ones.
    { weight: 1, arbitrary: fc.tuple(pairArb, fc.integer({ min: 1000, max: 3000 })).map(([p, n]) => [countryGB, ...Array.from({ length: n }, () => p)]) },
    { weight: 1, arbitrary: fc.integer({ min: 1000, max: 2500 }).map((n) => Array.from({ length: n }, (_, i) => ({ name: `p${i}`, value: '1', withEquals: true, encoding: 'raw' as const }))) },
  )
  .chain((pairs) => fc.constantFrom('&', '&', '&', ';', '&&').map((sep) => render(pairs, sep)));

const segmentArb = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom('abc-1', 'A.b_c~d-1', '..', '.', '%2e%2e', '%2E%2e', '.%2e', '%2e', 'a%2Fb', 'a%2fb', '%5C', 'a%5Cb', '%', '%zz', '%00', 'a%00b', '%252e%252e', '__proto__', 'x'.repeat(129), '%61'.repeat(129)) },
  { weight: 2, arbitrary: fc.string({ unit: 'grapheme', maxLength: 10 }).map(pct) },
  { weight: 1, arbitrary: fc.string({ unit: 'grapheme-ascii', maxLength: 10 }).map((s) => raw(s).replace(/[?]/g, '%3F')) },
);

const pathArb = fc.oneof(
  { weight: 8, arbitrary: fc.constant('/v1/properties') },
  { weight: 4, arbitrary: segmentArb.map((s) => `/v1/properties/${s}`) },
  { weight: 1, arbitrary: fc.constant('/v1/ping') },
  { weight: 1, arbitrary: fc.array(segmentArb, { minLength: 1, maxLength: 3 }).map((a) => `/v1/insights/${a.join('/')}`) },
  {
    weight: 1,
    arbitrary: fc.constantFrom('//v1/properties', '/v1//properties', '/v1/./properties', '/v1/x/../properties', '/V1/properties', '/v1/properties/', '/v1/properties%2F', '/v1/properties/a/b', '/%2e%2e/internal/v1/listings', '/internal/v1/listings', '/v1/properties;x', '/v1/%70roperties'),
  },
);

const printable = (max: number) => fc.string({ unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)), maxLength: max });
const FORBIDDEN_HEADERS = new Set(['content-length', 'transfer-encoding', 'host', 'x-api-key', 'x-request-id', 'expect', 'upgrade', 'connection', 'te', 'trailer', 'keep-alive', 'proxy-connection']);
const headersArb = fc.dictionary(
  fc.oneof(
    fc.constantFrom('x-forwarded-for', 'forwarded', 'x-real-ip', 'authorization', 'cookie', 'proxy-authorization', 'x-original-url', 'x-rewrite-url', 'x-http-method-override', 'accept', 'accept-encoding', 'range', 'if-none-match', 'via'),
    fc.stringMatching(/^[a-z][a-z0-9-]{0,14}$/).filter((n) => !FORBIDDEN_HEADERS.has(n)),
  ),
  printable(60),
  { maxKeys: 6 },
);

const requestArb = fc.record({ path: pathArb, query: fc.option(queryArb, { freq: 6 }), headers: headersArb });

describe('property-based: what reaches the data service', () => {
  test(`${RUNS} seeded runs: 200 or a catalogued 4xx; on 200 exactly one allow-listed upstream call, on 4xx none`, async () => {
    let answered = 0;
    const statuses = new Map<number, number>();
    await fc.assert(
      fc.asyncProperty(requestArb, async (r) => {
        // Insights with an Advanced key go to the insights stub (see the traversal tests below): Standard keys here.
        const path = r.query === null ? r.path : `${r.path}?${r.query}`;
        const id = nextRequestId();
        const headers = { ...r.headers, 'x-api-key': STD, 'x-request-id': id };
        const request = `GET ${path.length > 300 ? `${path.slice(0, 300)}… (${path.length} characters)` : path} ${JSON.stringify({ ...headers, 'x-api-key': '<key>' })}`;
        const a = await send(gateway.url, path, { headers, timeoutMs: 5000 }).catch((err: Error) => {
          throw new Error(`no answer: ${err.message}\nrequest: ${request}`);
        });
        answered++;
        statuses.set(a.status, (statuses.get(a.status) ?? 0) + 1);
        checkExchange(request, r.path, id, a);
      }),
      { seed: SEED, numRuns: RUNS, endOnFailure: true },
    );
    expect(answered).toBe(RUNS);
    // The generators reach both sides: answered pages and refusals.
    expect(statuses.get(200) ?? 0).toBeGreaterThan(RUNS / 20);
    expect(statuses.get(400) ?? 0).toBeGreaterThan(RUNS / 5);
  }, 120_000);
});

/** One raw request on a fresh socket; resolves with what came back and whether the server closed. */
function rawExchange(text: string | Buffer, timeoutMs = 5000): Promise<{ text: string; closed: boolean; ms: number }> {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const socket = net.connect(gateway.port, '127.0.0.1');
    let received = '';
    const timer = setTimeout(() => {
      socket.destroy();
      resolve({ text: received, closed: false, ms: Date.now() - started });
    }, timeoutMs);
    socket.on('data', (d: Buffer) => {
      received += d.toString('latin1');
    });
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearTimeout(timer);
      resolve({ text: received, closed: true, ms: Date.now() - started });
    });
    socket.write(text, (err) => err && reject(err));
  });
}

const statusOf = (raw: string): number => Number(/^HTTP\/1\.1 (\d{3})/.exec(raw)?.[1] ?? 0);
const bodyOf = (raw: string): unknown => JSON.parse(raw.slice(raw.indexOf('\r\n\r\n') + 4));

describe('thousands of parameters, oversized values, URLs and header blocks', () => {
  const thousands: Array<[string, string, string]> = [
    // Each under the 16 KB request-head limit, so the gateway's own validation answers.
    ['1500 unknown parameters', `country=GB&${Array.from({ length: 1500 }, (_, i) => `p${i}=1`).join('&')}`, 'p0'],
    ['country repeated 1200 times', Array.from({ length: 1200 }, () => 'country=GB').join('&'), 'country'],
    ['1000 __proto__ parameters', `country=GB&${'__proto__=x&'.repeat(1000)}`, '__proto__'],
    ['1500 a[b] and a[] parameters', `country=GB&${'a[b]=1&'.repeat(750)}${'a[]=1&'.repeat(750)}`, 'a[b]'],
    ['5000 bare names', `country=GB&${'x&'.repeat(5000)}`, 'x'],
    ['5000 empty pairs then an unknown one', `country=GB&${'&'.repeat(5000)}zz=1`, 'zz'],
    ['a 10 000-character country', `country=${'G'.repeat(10_000)}`, 'country'],
    ['a 10 000-digit limit', `country=GB&limit=${'9'.repeat(10_000)}`, 'limit'],
    ['a 1000-character listing_type', `country=GB&listing_type=${'%E2%82%AC'.repeat(1000)}`, 'listing_type'],
  ];

  test.each(thousands)('%s → 400 invalid_parameter, fast, never reaching the data service', async (_label, query, parameter) => {
    const id = nextRequestId();
    const started = Date.now();
    const a = await send(gateway.url, `/v1/properties?${query}`, { headers: { 'x-api-key': STD, 'x-request-id': id } });
    expect(Date.now() - started).toBeLessThan(2000);
    expectError(a, 'invalid_parameter', { parameter });
    expect(stub.byRequestId(id)).toEqual([]);
  });

  test('a parameter name over 128 characters is reported truncated, not echoed whole', async () => {
    const name = 'n'.repeat(5000);
    const a = await send(gateway.url, `/v1/properties?country=GB&${name}=1`, { headers: { 'x-api-key': STD } });
    expectError(a, 'invalid_parameter', { parameter: expect.any(String) });
    expect(a.body.parameter.length).toBeLessThanOrEqual(129);
    expect(a.text.length).toBeLessThan(1000);
  });

  test.each([
    ['a 20 KB path', `GET /v1/properties/${'a'.repeat(20_000)}?country=GB HTTP/1.1\r\nHost: x\r\nx-api-key: ${STD}\r\n\r\n`],
    ['a 20 KB query', `GET /v1/properties?country=GB&${'p=1&'.repeat(5000)} HTTP/1.1\r\nHost: x\r\nx-api-key: ${STD}\r\n\r\n`],
    ['a 20 KB header value', `GET /v1/ping HTTP/1.1\r\nHost: x\r\nx-api-key: ${STD}\r\nx-big: ${'b'.repeat(20_000)}\r\n\r\n`],
    ['a 20 KB key', `GET /v1/ping HTTP/1.1\r\nHost: x\r\nx-api-key: ${'k'.repeat(20_000)}\r\n\r\n`],
    ['200 headers of 100 bytes', `GET /v1/ping HTTP/1.1\r\nHost: x\r\nx-api-key: ${STD}\r\n${Array.from({ length: 200 }, (_, i) => `x-h${i}: ${'v'.repeat(100)}\r\n`).join('')}\r\n`],
  ])('%s (over the 16 KB head limit) → 400 invalid_parameter JSON, connection closed, fast', async (_label, request) => {
    const before = stub.requests.length;
    const { text, closed, ms } = await rawExchange(request);
    expect(statusOf(text)).toBe(400);
    expect(text).toMatch(/\r\nContent-Type: application\/json/i);
    expect(text).toMatch(/\r\nCache-Control: no-store/i);
    expect(bodyOf(text)).toEqual({ error: 'invalid_parameter', message: expect.any(String), parameter: 'request' });
    expect(text).not.toContain(STD);
    expect(closed).toBe(true);
    expect(ms).toBeLessThan(2000);
    expect(stub.requests.length).toBe(before);
  });

  test('an oversized x-request-id is not echoed; 500 small headers are answered normally', async () => {
    const long = await send(gateway.url, '/v1/ping', { headers: { 'x-api-key': STD, 'x-request-id': 'r'.repeat(5000) } });
    expectKeyedSuccess(long);
    expect(String(long.headers['x-request-id']).length).toBeLessThanOrEqual(128);
    const many: Record<string, string> = { 'x-api-key': STD };
    for (let i = 0; i < 500; i++) many[`x${i}`] = '1';
    expectKeyedSuccess(await send(gateway.url, '/v1/ping', { headers: many }));
  });

  test('the gateway is unharmed', async () => {
    expectKeyedSuccess(await send(gateway.url, '/v1/properties?country=GB&limit=3', { headers: { 'x-api-key': STD } }));
    expect(gateway.child.exitCode).toBeNull();
  });
});

describe('traversal and odd paths: 404, never reaching an upstream', () => {
  const LISTING_PATHS = [
    '//v1/ping',
    '//v1/properties?country=GB',
    '/v1//properties?country=GB',
    '/v1/./properties?country=GB',
    '/v1/x/../properties?country=GB',
    '/./v1/properties?country=GB',
    '/v1/properties/./abc?country=GB',
    '/v1/properties/abc/..?country=GB',
    '/v1/properties/../ping',
    '/v1/properties/..?country=GB',
    '/v1/properties/%2e%2e?country=GB',
    '/v1/properties/.%2E?country=GB',
    '/v1/properties/%2e?country=GB',
    '/v1/properties/%252e%252e?country=GB',
    '/v1/properties/..%2F..%2Finternal%2Fv1%2Flistings?country=GB',
    '/v1/properties/%2e%2e%2f%2e%2e%2finternal?country=GB',
    '/v1/properties/abc%2F..?country=GB',
    '/v1/properties/a%2Fb?country=GB',
    '/v1/properties/a%5Cb?country=GB',
    '/v1/properties/a%5C..%5C..?country=GB',
    '/v1/properties%2Fabc?country=GB',
    '/v1/properties%2F%2e%2e%2Finternal?country=GB',
    '/v1%2Fproperties?country=GB',
    '/%2e%2e/internal/v1/listings?country=GB',
    '/v1/%2e%2e/internal/v1/listings?country=GB',
    '/internal/v1/listings?country=GB',
    '/internal/v1/listings/GB/abc',
    '/v1/properties;jsessionid=x?country=GB',
    '/v1/properties/abc;x=1?country=GB',
    '/v1/properties/abc%00?country=GB',
    '/v1/properties/abc%0d%0aX-Injected:%201?country=GB',
    '/v1/ping%3Fx',
    '/v1/ping/',
    '/v1/ping/.',
    '/V1/ping',
  ];

  test.each(LISTING_PATHS)('%s → 404 not_found, nothing upstream', async (path) => {
    const before = stub.requests.length;
    for (const key of [STD, ADV]) expectError(await send(gateway.url, path, { headers: { 'x-api-key': key } }), 'not_found');
    expect(stub.requests.slice(before).map((r) => r.url)).toEqual([]);
  });

  test('control: a plain insights sub-path with an Advanced key is forwarded to the insights service', async () => {
    const id = nextRequestId();
    expect((await send(gateway.url, '/v1/insights/market/GB', { headers: { 'x-api-key': ADV, 'x-request-id': id } })).status).toBe(200);
    expect(stub.byRequestId(id).map((r) => r.path)).toEqual(['/insights-api/market/GB']);
  });

  const INSIGHTS_PATHS = [
    '/v1/insights/../../internal/v1/listings?country=GB',
    '/v1/insights/..',
    '/v1/insights/./x',
    '/v1/insights/%2e%2e/%2e%2e/internal/v1/listings?country=GB',
    '/v1/insights/.%2E/admin',
    '/v1/insights/a%2F..%2F..%2Fadmin',
    '/v1/insights/a%2Fb',
    '/v1/insights/a%5C..%5Cb',
    '/v1/insights//x',
    '/v1/insights/%00',
  ];

  // The insights sub-path is checked segment by segment (gateway/router.ts): dot-segments, encoded
  // slashes and empty segments are unknown paths, so nothing can traverse the insights service.
  test.each(INSIGHTS_PATHS)('insights %s with an Advanced key → 404 not_found, nothing upstream', async (path) => {
    const before = stub.requests.length;
    expectError(await send(gateway.url, path, { headers: { 'x-api-key': ADV } }), 'not_found');
    expect(stub.requests.slice(before).map((r) => r.url)).toEqual([]);
  });
});
