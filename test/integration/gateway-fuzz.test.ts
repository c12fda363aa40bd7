/**
 * Property-based: arbitrary query strings (Unicode names and values, duplicates, `__proto__`,
 * `a[b]`, bad percent-escapes, many keys), headers, methods and paths thrown at a real gateway
 * with a valid key. The answer is always a 200 or a JSON error with a catalogued code and its
 * status; never a 5xx, never a hang. Also: key values pasted into URLs never reach the logs.
 */
import fc from 'fast-check';
import {
  UNLIMITED,
  allPropertyNames,
  ERROR_CATALOGUE,
  linesWithSecrets,
  randomKeyValue,
  send,
  startStack,
  type Answer,
  type ErrorCode,
  type KeySpec,
  type Proc,
  type Stack,
} from '../kit/gateway-stack';
import { fixtureListings, sampleIds } from '../fixtures/listings';

const LISTINGS = fixtureListings();
const IDS = sampleIds(LISTINGS);
const SEED = Number(process.env.FUZZ_SEED ?? 20_261_121);
const RUNS = Number(process.env.FUZZ_RUNS ?? 300);
const REQUEST_TIMEOUT_MS = 5000;

const KEYS: KeySpec[] = [
  {
    id: 'fuzz',
    value: randomKeyValue('fuzz'),
    tier: 'standard',
    countries: ['GB', 'FR'],
    address: '127.0.0.1',
    status: 'active',
    limits: UNLIMITED,
  },
  {
    id: 'paste',
    value: randomKeyValue('paste'),
    tier: 'standard',
    countries: ['GB'],
    address: '127.0.0.1',
    status: 'active',
  },
];

let stack: Stack;
let fuzzGateway: Proc;
let pasteGateway: Proc;

beforeAll(async () => {
  stack = await startStack({ keys: KEYS, listings: LISTINGS, gateways: [{}, {}] });
  [fuzzGateway, pasteGateway] = stack.gateways as [Proc, Proc];
});
afterAll(async () => {
  await stack?.stop();
});

// --- generators -------------------------------------------------------------------------------

const UNRESERVED = /[A-Za-z0-9\-._~]/;
/** Full percent-encoding of the UTF-8 bytes (lone surrogates become U+FFFD, never a throw). */
const pct = (s: string): string =>
  [...Buffer.from(s, 'utf8')].map((b) => (UNRESERVED.test(String.fromCharCode(b)) ? String.fromCharCode(b) : `%${b.toString(16).toUpperCase().padStart(2, '0')}`)).join('');
/** Raw: printable ASCII (including % & = + [ ] # ?) sent as is, everything else percent-encoded. */
const raw = (s: string): string => [...s].map((c) => (/^[\x21-\x7e]$/.test(c) ? c : pct(c))).join('');
/** Form style: spaces as `+`, the rest percent-encoded. */
const form = (s: string): string => s.split(' ').map(pct).join('+');
const ENCODERS = { pct, raw, form } as const;

const nameArb = fc.oneof(
  { weight: 5, arbitrary: fc.constantFrom('country', 'listing_type', 'property_type', 'limit', 'cursor') },
  {
    weight: 2,
    arbitrary: fc.constantFrom('__proto__', 'constructor', 'prototype', 'hasOwnProperty', 'toString', 'a[b]', 'a[]', 'country[]', 'country[0]', '__proto__[country]', 'country.x', '', ' ', 'Country', 'api_key', 'x-api-key'),
  },
  { weight: 2, arbitrary: fc.string({ unit: 'grapheme', maxLength: 10 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 6 }) },
);

const valueArb = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom('GB', 'gb', 'FR', 'DE', 'XX', 'GBR', 'sale', 'rent', 'house', 'land', 'apartment', 'commercial', '1', '20', '100', '101', '0', '-1', '1e1', '0x10', '05') },
  { weight: 2, arbitrary: fc.constantFrom('', '%', '%%', '%zz', '%E0%A4', '%C0%AF', '%00', '%FF', 'a%', '%2', '+', ' ', '[]', '{}', 'null', 'undefined', '__proto__', 'é', '🏠', '\u202e', 'a'.repeat(300)) },
  { weight: 2, arbitrary: fc.string({ unit: 'grapheme', maxLength: 12 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 8 }) },
  { weight: 1, arbitrary: fc.integer().map(String) },
);

const pairArb = fc.record({
  name: nameArb,
  value: valueArb,
  withEquals: fc.boolean(),
  encoding: fc.constantFrom<keyof typeof ENCODERS>('pct', 'raw', 'form'),
});

const queryArb = fc.oneof(
  { weight: 6, arbitrary: fc.array(pairArb, { maxLength: 8 }) },
  { weight: 1, arbitrary: fc.array(pairArb, { minLength: 30, maxLength: 120 }) },
  // A valid base with something appended or duplicated.
  {
    weight: 3,
    arbitrary: fc.tuple(fc.array(pairArb, { maxLength: 3 }), fc.boolean()).map(([extra, dup]) => [
      { name: 'country', value: 'GB', withEquals: true, encoding: 'pct' as const },
      ...(dup ? [{ name: 'country', value: 'GB', withEquals: true, encoding: 'pct' as const }] : []),
      ...extra,
    ]),
  },
).chain((pairs) =>
  fc.constantFrom('&', '&', '&', ';', '&&').map((sep) =>
    pairs
      .map((p) => {
        const enc = ENCODERS[p.encoding];
        return p.withEquals ? `${enc(p.name)}=${enc(p.value)}` : enc(p.name);
      })
      .join(sep),
  ),
);

const SPECIAL_QUERIES = ['', '&&&', '=', '==', '&=&', 'country=GB&', '&country=GB', 'country=GB%', 'country%3DGB', 'country=GB#frag', 'country=GB&limit=5#x', '__proto__[country]=GB', 'country[]=GB', 'a[b]=c&a[b]=d', 'country=GB&country', '?country=GB'];

const segmentArb = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(IDS.publishedGb, IDS.withdrawnGb, 'shared-1', '..', '.', '%2e%2e', '%2E', 'a%2Fb', '%', '%zz', '%E0%A4%A', '%00', '__proto__', 'constructor', 'x'.repeat(129), '~', '-') },
  { weight: 2, arbitrary: fc.string({ unit: 'grapheme', maxLength: 10 }).map(pct) },
  { weight: 1, arbitrary: fc.string({ unit: 'grapheme-ascii', maxLength: 10 }).map(raw) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 6 }).map(pct) },
);

const pathArb = fc.oneof(
  { weight: 8, arbitrary: fc.constant('/v1/properties') },
  { weight: 2, arbitrary: fc.constant('/v1/ping') },
  { weight: 1, arbitrary: fc.constant('/v1/insights') },
  { weight: 4, arbitrary: segmentArb.map((s) => `/v1/properties/${s}`) },
  { weight: 1, arbitrary: segmentArb.map((s) => `/v1/insights/${s}`) },
  { weight: 1, arbitrary: fc.array(segmentArb, { maxLength: 4 }).map((a) => `/${a.join('/')}`) },
  {
    weight: 1,
    arbitrary: fc.constantFrom('/', '//v1/ping', '/v1//properties', '/V1/ping', '/v1/ping/', '/v1/properties/', '/v1/properties/a/b', '/%2e%2e/%2e%2e/etc/passwd', '/v1/openapi.json', '/docs', '/docs/', '/docs/assets/x', '/docs/assets/%2e%2e', '/v1/%70ing', '/v1/properties%2F', '/*', '/v1/insights/*'),
  },
);

const printable = (max: number) => fc.string({ unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)), maxLength: max });
const HOP_BY_HOP = new Set(['content-length', 'transfer-encoding', 'connection', 'host', 'expect', 'upgrade', 'te', 'keep-alive', 'trailer', 'x-api-key', 'proxy-connection']);
const headerNameArb = fc.stringMatching(/^[a-z][a-z0-9-]{0,14}$/).filter((n) => !HOP_BY_HOP.has(n));

const headersArb = fc.record(
  {
    'x-request-id': fc.oneof(printable(40), fc.stringMatching(/^[A-Za-z0-9._:-]{1,130}$/)),
    accept: fc.constantFrom('application/json', 'text/html', '*/*', 'application/xml', 'garbage', ''),
    'x-forwarded-for': fc.oneof(fc.constantFrom('127.0.0.2', '203.0.113.9, 127.0.0.2', 'not-an-ip', ''), printable(30)),
    'accept-encoding': fc.constantFrom('gzip', 'br', 'identity', '*'),
    'content-type': fc.constantFrom('application/json', 'text/plain', 'multipart/form-data; boundary=x'),
    'if-none-match': printable(20),
    range: fc.constantFrom('bytes=0-10', 'bytes=-1', 'items=0-5'),
    authorization: fc.constantFrom('Bearer x', 'Basic Zm9vOmJhcg=='),
  },
  { requiredKeys: [] },
);
const extraHeadersArb = fc.dictionary(headerNameArb, printable(40), { maxKeys: 6 });

const methodArb = fc.oneof({ weight: 10, arbitrary: fc.constant('GET') }, { weight: 1, arbitrary: fc.constantFrom('POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS') });

const requestArb = fc.record({
  method: methodArb,
  path: pathArb,
  query: fc.oneof({ weight: 6, arbitrary: queryArb }, { weight: 1, arbitrary: fc.constantFrom(...SPECIAL_QUERIES) }),
  withQuery: fc.boolean(),
  headers: headersArb,
  extraHeaders: extraHeadersArb,
});

// --- the property ---------------------------------------------------------------------------

const ALLOWED_ERROR_FIELDS = new Set(['error', 'message', 'parameter', 'ip']);

/** Throws (with the request and answer) unless the answer is a 200 or a catalogued JSON error. */
function checkAnswer(request: string, a: Answer): void {
  const fail = (why: string): never => {
    throw new Error(`${why}\nrequest: ${request}\nanswer: ${a.status} ${a.headers['content-type'] ?? ''} ${a.text.slice(0, 300)}`);
  };
  if (a.status >= 500) fail('5xx answer');
  if (a.headers['x-powered-by'] !== undefined) fail('X-Powered-By present');
  if (a.status === 200) {
    const path = request.split(' ')[1]!;
    if (path.startsWith('/v1/properties') || path.startsWith('/v1/ping')) {
      if (typeof a.body !== 'object' || a.body === null) fail('200 without a JSON body');
      if (allPropertyNames(a.body).has('withdrawn')) fail('withdrawn field in an answer');
    }
    return;
  }
  if (!/^application\/json/.test(a.headers['content-type'] ?? '')) fail('error answer is not JSON');
  const body = a.body as Record<string, unknown> | undefined;
  if (!body || typeof body !== 'object') fail('error body is not a JSON object');
  const code = body!.error as ErrorCode;
  if (typeof code !== 'string' || !(code in ERROR_CATALOGUE)) fail(`unknown error code ${String(code)}`);
  if (ERROR_CATALOGUE[code].status !== a.status) fail(`status ${a.status} does not match code ${code}`);
  if (typeof body!.message !== 'string') fail('message is not a string');
  for (const field of Object.keys(body!)) if (!ALLOWED_ERROR_FIELDS.has(field)) fail(`unexpected field ${field}`);
  if ('parameter' in body! && typeof body!.parameter !== 'string') fail('parameter is not a string');
  if (a.headers['cache-control'] !== 'no-store') fail('error without Cache-Control: no-store');
}

describe('property-based: arbitrary requests with a valid key', () => {
  test(`${RUNS} seeded runs: always 200 or a catalogued JSON error, never 5xx, never a hang`, async () => {
    const keyValue = stack.key('fuzz').value;
    let answered = 0;
    await fc.assert(
      fc.asyncProperty(requestArb, async (r) => {
        const path = r.withQuery ? `${r.path}?${r.query}` : r.path;
        const headers = { ...r.extraHeaders, ...r.headers, 'x-api-key': keyValue };
        const request = `${r.method} ${path} ${JSON.stringify({ ...headers, 'x-api-key': '<key>' })}`;
        let a: Answer;
        try {
          a = await send(fuzzGateway.url, path, { method: r.method, headers, timeoutMs: REQUEST_TIMEOUT_MS });
        } catch (err) {
          throw new Error(`no answer: ${(err as Error).message}\nrequest: ${request}`);
        }
        answered++;
        checkAnswer(request, a);
      }),
      { seed: SEED, numRuns: RUNS, endOnFailure: true },
    );
    expect(answered).toBeGreaterThanOrEqual(RUNS);
  }, 60_000);

  test('the gateway is still healthy afterwards', async () => {
    const a = await send(fuzzGateway.url, '/v1/properties?country=GB&limit=3', { headers: { 'x-api-key': stack.key('fuzz').value } });
    expect(a.status).toBe(200);
    expect(a.body.data).toHaveLength(3);
  });

  test('no line the fuzzed gateway logged contains a key value', async () => {
    await fuzzGateway.stop();
    await fuzzGateway.closed;
    expect(fuzzGateway.output.length).toBeGreaterThan(RUNS);
    expect(linesWithSecrets(fuzzGateway.output, stack.keyValues())).toEqual([]);
  });
});

describe('key values pasted into the URL never reach the logs', () => {
  test('?<value>, ?country=GB&<value>, ?<value>=1 and ?apikey=<value> are not logged', async () => {
    const value = stack.key('paste').value;
    const headers = { 'x-api-key': value };
    const answers = await Promise.all(
      [`/v1/properties?${value}`, `/v1/properties?country=GB&${value}`, `/v1/properties?${value}=1`, `/v1/ping?${value}`, `/v1/properties?apikey=${value}`].map((p) =>
        send(pasteGateway.url, p, { headers }),
      ),
    );
    for (const a of answers) expect(a.status).toBeLessThan(500);
    await pasteGateway.stop();
    await pasteGateway.closed;
    expect(pasteGateway.output.some((l) => l.includes('"answered"'))).toBe(true);
    expect(linesWithSecrets(pasteGateway.output, [value])).toEqual([]);
  });
});
