/**
 * The public surface of the gateway, against a real data service: answer shapes, 404/405 before
 * any key, every 401/403 variant, 400 invalid_parameter, 403 country_not_entitled, 404 not_found
 * for listings, 503 not_configured, the order of checks (README, "The surface"), and the log check.
 */
import {
  allPropertyNames,
  expectCommonHeaders,
  expectError,
  expectKeyedSuccess,
  linesWithSecrets,
  plkKeyValue,
  randomKeyValue,
  send,
  startStack,
  withBadChecksum,
  type Answer,
  type KeySpec,
  type SendOptions,
  type Stack,
} from '../kit/gateway-stack';
import { fixtureListings, LONGEST_ID, ODD_IDS, sampleIds, withoutWithdrawn } from '../fixtures/listings';

const LISTINGS = fixtureListings();
const IDS = sampleIds(LISTINGS);
const PLK = plkKeyValue();

const key = (id: string, over: Partial<KeySpec> = {}): KeySpec => ({
  id,
  value: randomKeyValue(id),
  tier: 'standard',
  countries: ['GB', 'FR', 'ES'],
  address: '127.0.0.1',
  status: 'active',
  ...over,
});

const KEYS: KeySpec[] = [
  key('std'),
  key('adv', { tier: 'advanced', countries: ['GB', 'FR', 'DE'] }),
  key('plk', { value: PLK }),
  // The hash of a `plk_` value with a wrong checksum is stored: the value must still be refused.
  key('plk-bad-stored', { value: withBadChecksum(plkKeyValue()) }),
  key('paused-std', { status: 'paused', pause_reason: 'unpaid_renewal' }),
  key('paused-adv', { tier: 'advanced', status: 'paused', pause_reason: 'payment_dispute' }),
  key('revoked', { status: 'revoked' }),
  key('lower-countries', { countries: ['gb', 'fr'] }),
  key('elsewhere', { address: '203.0.113.7' }),
  key('elsewhere-adv', { tier: 'advanced', address: '203.0.113.7' }),
  key('elsewhere-paused', { address: '203.0.113.7', status: 'paused', pause_reason: 'unpaid_renewal' }),
  key('elsewhere-revoked', { address: '203.0.113.7', status: 'revoked' }),
];
/** Imported key values of other formats: any value whose SHA-256 is stored authenticates. */
const IMPORTED_VALUES = ['k', 'with spaces inside', 'Zm9vYmFy+/Zm9v==', 'a,b;c=d', '"quoted"', 'x'.repeat(256), 'PLK_upper_not_the_prefix', 'plk-dash-not-the-prefix', 'punct:?!&#%@{}[]|~^`'];
KEYS.push(...IMPORTED_VALUES.map((value, i) => key(`imported-${i}`, { value })));
/** Values clients send that are not (valid) keys; they must not reach the logs either. */
const UNKNOWN_VALUE = randomKeyValue('unknown');
const BAD_CHECKSUM_VALUE = withBadChecksum(PLK);

let stack: Stack;
const v = (id: string): string => stack.key(id).value;
const get = (path: string, options: SendOptions = {}): Promise<Answer> => send(stack.url, path, options);
const getAs = (keyId: string, path: string, options: SendOptions = {}): Promise<Answer> =>
  send(stack.url, path, { ...options, headers: { 'x-api-key': v(keyId), ...options.headers } });

beforeAll(async () => {
  stack = await startStack({ keys: KEYS, listings: LISTINGS });
});
afterAll(async () => {
  await stack?.stop();
});

/** One representative request per keyed endpoint. */
const ENDPOINTS = {
  ping: '/v1/ping',
  list: '/v1/properties?country=GB',
  item: `/v1/properties/${IDS.publishedGb}?country=GB`,
  insights: '/v1/insights',
  insightsSub: '/v1/insights/anything',
} as const;
const ALL_ENDPOINTS = Object.entries(ENDPOINTS);

describe('successful answers', () => {
  test('GET /v1/ping answers exactly {ip, key_id, tier}', async () => {
    const std = await getAs('std', '/v1/ping');
    expectKeyedSuccess(std);
    expect(std.body).toStrictEqual({ ip: '127.0.0.1', key_id: 'std', tier: 'standard' });
    const adv = await getAs('adv', '/v1/ping');
    expectKeyedSuccess(adv);
    expect(adv.body).toStrictEqual({ ip: '127.0.0.1', key_id: 'adv', tier: 'advanced' });
  });

  test('GET /v1/ping takes no parameters: any is invalid_parameter, named', async () => {
    expectError(await getAs('std', '/v1/ping?verbose=1'), 'invalid_parameter', { parameter: 'verbose' });
  });

  test('a key in the generated plk_ format with a correct checksum authenticates', async () => {
    const a = await getAs('plk', '/v1/ping');
    expectKeyedSuccess(a);
    expect(a.body).toStrictEqual({ ip: '127.0.0.1', key_id: 'plk', tier: 'standard' });
  });

  test.each(IMPORTED_VALUES.map((value, i) => [value.length > 30 ? `${value.slice(0, 8)}… (${value.length} characters)` : value, i]))(
    'an imported key value of another format authenticates: %s',
    async (_label, i) => {
      const id = `imported-${i}`;
      const value = stack.key(id).value;
      const a = await send(stack.url, '/v1/ping', { headers: { 'x-api-key': value } });
      expectKeyedSuccess(a);
      expect(a.body.key_id).toBe(id);
    },
  );

  test('GET /v1/properties answers {data, next_cursor} with 20 listings by default, no withdrawn field', async () => {
    const a = await getAs('std', '/v1/properties?country=GB');
    expectKeyedSuccess(a);
    expect(Object.keys(a.body).sort()).toEqual(['data', 'next_cursor']);
    expect(a.body.data).toHaveLength(20);
    expect(typeof a.body.next_cursor).toBe('string');
    for (const item of a.body.data) {
      expect(item).toEqual(expect.objectContaining({ id: expect.any(String), country: 'GB', listing_type: expect.any(String), property_type: expect.any(String) }));
    }
    expect(allPropertyNames(a.body).has('withdrawn')).toBe(false);
    const published = new Map(LISTINGS.filter((l) => l.country === 'GB' && !l.withdrawn).map((l) => [l.id, withoutWithdrawn(l)]));
    // Every listing is a published fixture listing, with every other field passed through as stored.
    for (const item of a.body.data) expect(item).toStrictEqual(published.get(item.id));
  });

  test('country is case-insensitive and answered in upper case', async () => {
    const lower = await getAs('std', '/v1/properties?country=gb');
    const upper = await getAs('std', '/v1/properties?country=GB');
    expectKeyedSuccess(lower);
    expect(lower.body.data.length).toBeGreaterThan(0);
    for (const item of lower.body.data) expect(item.country).toBe('GB');
    expect(lower.body.data).toStrictEqual(upper.body.data);
    const mixed = await getAs('std', '/v1/properties?country=fR');
    expectKeyedSuccess(mixed);
    for (const item of mixed.body.data) expect(item.country).toBe('FR');
  });

  test.each([
    ['1', 1],
    ['100', 100],
    ['42', 42],
  ])('limit=%s gives a page of %d', async (limit, n) => {
    const a = await getAs('std', `/v1/properties?country=GB&limit=${limit}`);
    expectKeyedSuccess(a);
    expect(a.body.data).toHaveLength(n);
  });

  test('filters narrow the page', async () => {
    const a = await getAs('std', '/v1/properties?country=GB&listing_type=rent&property_type=land&limit=100');
    expectKeyedSuccess(a);
    expect(a.body.data.length).toBeGreaterThan(0);
    for (const item of a.body.data) expect([item.listing_type, item.property_type]).toEqual(['rent', 'land']);
  });

  test('an entitled country without listings answers an empty page with a null cursor', async () => {
    const a = await getAs('std', '/v1/properties?country=ES');
    expectKeyedSuccess(a);
    expect(a.body).toStrictEqual({ data: [], next_cursor: null });
  });

  test('GET /v1/properties/{id}?country=GB answers {data} with the listing as stored, minus withdrawn', async () => {
    for (const country of ['GB', 'gb']) {
      const a = await getAs('std', `/v1/properties/${IDS.publishedGb}?country=${country}`);
      expectKeyedSuccess(a);
      expect(Object.keys(a.body)).toEqual(['data']);
      expect(a.body.data).toStrictEqual(withoutWithdrawn(LISTINGS.find((l) => l.country === 'GB' && l.id === IDS.publishedGb)!));
      expect(allPropertyNames(a.body).has('withdrawn')).toBe(false);
    }
  });

  test('ids using the whole alphabet, up to 128 characters, are found (or 404 when withdrawn)', async () => {
    expect(LONGEST_ID).toHaveLength(128);
    for (const id of ODD_IDS) {
      const listing = LISTINGS.find((l) => l.country === 'GB' && l.id === id)!;
      const a = await getAs('std', `/v1/properties/${id}?country=GB`);
      if (listing.withdrawn) expectError(a, 'not_found');
      else {
        expectKeyedSuccess(a);
        expect(a.body).toStrictEqual({ data: withoutWithdrawn(listing) });
      }
    }
  });

  test('the same id in two countries is answered per country', async () => {
    const gb = await getAs('std', '/v1/properties/shared-1?country=GB');
    const fr = await getAs('std', '/v1/properties/shared-1?country=FR');
    expectKeyedSuccess(gb);
    expectKeyedSuccess(fr);
    expect(gb.body.data.country).toBe('GB');
    expect(fr.body.data.country).toBe('FR');
    expect(gb.body.data).not.toStrictEqual(fr.body.data);
  });

  test('a well-formed x-request-id is echoed, on successes and errors; a malformed one is replaced', async () => {
    const ok = await getAs('std', '/v1/ping', { headers: { 'x-request-id': 'it-req.42:abc_DEF-1' } });
    expect(ok.headers['x-request-id']).toBe('it-req.42:abc_DEF-1');
    const err = await get('/v1/ping', { headers: { 'x-request-id': 'it-req-err-1' } });
    expectError(err, 'unauthenticated');
    expect(err.headers['x-request-id']).toBe('it-req-err-1');
    const bad = await getAs('std', '/v1/ping', { headers: { 'x-request-id': 'has spaces and "quotes"' } });
    expectKeyedSuccess(bad);
    expect(bad.headers['x-request-id']).not.toBe('has spaces and "quotes"');
    const generated = await getAs('std', '/v1/ping');
    const again = await getAs('std', '/v1/ping');
    expect(generated.headers['x-request-id']).not.toBe(again.headers['x-request-id']);
  });

  test('reference material needs no key', async () => {
    const doc = await get('/v1/openapi.json');
    expect(doc.status).toBe(200);
    expect(doc.body.openapi).toMatch(/^3\.1/);
    expectCommonHeaders(doc);
    const docs = await get('/docs');
    expect(docs.status).toBe(200);
  });
});

describe('unknown path 404, then method 405, both before any key check', () => {
  const UNKNOWN_PATHS = [
    '/',
    '/v1',
    '/v1/',
    '/v2/ping',
    '/v1/pings',
    '/V1/ping',
    '/v1/PING',
    '/v1/ping/',
    '/v1/ping/extra',
    '/v1/properties/',
    '/v1/properties/a/b',
    '/v1/insight',
    '/v1/property',
    '/internal/v1/listings?country=GB',
    '/v1/properties%2Fx',
  ];
  const AUTH_VARIANTS: Array<[string, () => SendOptions]> = [
    ['no key', () => ({})],
    ['an unknown key', () => ({ headers: { 'x-api-key': UNKNOWN_VALUE } })],
    ['a valid key', () => ({ headers: { 'x-api-key': v('std') } })],
    ['a paused key', () => ({ headers: { 'x-api-key': v('paused-std') } })],
  ];

  test.each(UNKNOWN_PATHS)('GET %s → 404 not_found with any key', async (path) => {
    for (const [, opts] of AUTH_VARIANTS) expectError(await get(path, opts()), 'not_found');
  });

  test.each(UNKNOWN_PATHS.slice(0, 6))('POST/DELETE %s → 404 not_found (path before method)', async (path) => {
    for (const method of ['POST', 'DELETE']) expectError(await get(path, { method }), 'not_found');
  });

  const KNOWN_PATHS = [
    '/v1/ping',
    '/v1/properties',
    '/v1/properties?country=GB',
    `/v1/properties/${IDS.publishedGb}`,
    '/v1/insights',
    '/v1/insights/anything',
    '/v1/insights/a/b',
    '/v1/openapi.json',
    '/docs',
  ];
  const METHODS = ['POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];

  test.each(KNOWN_PATHS)('other methods on %s → 405 with Allow: GET, whatever the key', async (path) => {
    for (const method of METHODS) {
      for (const [, opts] of AUTH_VARIANTS) expectError(await get(path, { method, ...opts() }), 'method_not_allowed');
    }
  });

  test.each(KNOWN_PATHS)('HEAD %s → 405 with Allow: GET', async (path) => {
    for (const [, opts] of AUTH_VARIANTS) {
      const a = await get(path, { method: 'HEAD', ...opts() });
      expect(a.status).toBe(405);
      expect(a.headers.allow).toBe('GET');
      expect(a.headers['cache-control']).toBe('no-store');
      expect(a.headers['content-type']).toMatch(/^application\/json/);
      expectCommonHeaders(a);
    }
  });

  test('HEAD on an unknown path → 404', async () => {
    const a = await get('/nope', { method: 'HEAD' });
    expect(a.status).toBe(404);
    expectCommonHeaders(a);
  });

  test('a malformed listing id is 404 before the method and key checks', async () => {
    expectError(await get('/v1/properties/%2e%2e?country=GB'), 'not_found');
    expectError(await get('/v1/properties/%2e%2e?country=GB', { method: 'POST' }), 'not_found');
  });
});

describe('401 unauthenticated', () => {
  const variants: Array<[string, () => SendOptions]> = [
    ['no key', () => ({})],
    ['an empty key', () => ({ headers: { 'x-api-key': '' } })],
    ['an unknown key', () => ({ headers: { 'x-api-key': UNKNOWN_VALUE } })],
    ['a revoked key', () => ({ headers: { 'x-api-key': v('revoked') } })],
    ['a revoked key from another address', () => ({ headers: { 'x-api-key': v('elsewhere-revoked') } })],
    ['a plk_ value with a bad checksum', () => ({ headers: { 'x-api-key': BAD_CHECKSUM_VALUE } })],
    ['a stored plk_ value with a bad checksum', () => ({ headers: { 'x-api-key': v('plk-bad-stored') } })],
    ['a plk_ value of the wrong length', () => ({ headers: { 'x-api-key': PLK.slice(0, -1) } })],
    ['the key twice', () => ({ headers: { 'x-api-key': [v('std'), v('std')] } })],
    ['a valid and an unknown key', () => ({ headers: { 'x-api-key': [v('std'), UNKNOWN_VALUE] } })],
    ['an unknown and a valid key', () => ({ headers: { 'x-api-key': [UNKNOWN_VALUE, v('std')] } })],
    ['the key twice on one line', () => ({ headers: { 'x-api-key': `${v('std')}, ${v('std')}` } })],
    ['the key with different case', () => ({ headers: { 'x-api-key': v('std').toUpperCase() } })],
    ['the key with a trailing character', () => ({ headers: { 'x-api-key': `${v('std')}x` } })],
    ['a 10 000-character key', () => ({ headers: { 'x-api-key': 'k'.repeat(10_000) } })],
    ['the key in another header', () => ({ headers: { authorization: `Bearer ${v('std')}`, 'api-key': v('std') } })],
  ];

  test.each(ALL_ENDPOINTS)('%s: every variant gets the same 401 body', async (_name, path) => {
    const bodies: string[] = [];
    for (const [label, opts] of variants) {
      const a = await get(path, opts());
      try {
        expectError(a, 'unauthenticated');
      } catch (err) {
        throw new Error(`${label}: ${(err as Error).message}`);
      }
      bodies.push(a.text);
    }
    expect(new Set(bodies).size).toBe(1);
  });

  test('a key in the query string does not authenticate', async () => {
    expectError(await get(`/v1/ping?api_key=${v('std')}`), 'unauthenticated');
  });
});

describe('403 ip_not_allowed, key_paused, upgrade_required', () => {
  test.each(ALL_ENDPOINTS)('%s: a key registered for another address → ip_not_allowed with the address seen', async (_n, path) => {
    expectError(await getAs('elsewhere', path), 'ip_not_allowed', { ip: '127.0.0.1' });
    expectError(await getAs('elsewhere-adv', path), 'ip_not_allowed', { ip: '127.0.0.1' });
  });

  test.each(ALL_ENDPOINTS)('%s: a paused key → key_paused (standard and advanced)', async (_n, path) => {
    expectError(await getAs('paused-std', path), 'key_paused');
    expectError(await getAs('paused-adv', path), 'key_paused');
  });

  test.each(['/v1/insights', '/v1/insights/anything', '/v1/insights/a/b', '/v1/insights?region=GB&period=2024'])(
    'a Standard key on %s → upgrade_required',
    async (path) => {
      expectError(await getAs('std', path), 'upgrade_required');
    },
  );

  test.each(['/v1/insights', '/v1/insights/anything', '/v1/insights/a/b'])(
    'an Advanced key on %s → 503 not_configured with Retry-After',
    async (path) => {
      const a = await getAs('adv', path);
      expectError(a, 'not_configured');
    },
  );
});

describe('400 invalid_parameter on GET /v1/properties', () => {
  const CASES: Array<[string, string]> = [
    // missing / unknown
    ['', 'country'],
    ['?', 'country'],
    ['?listing_type=sale', 'country'],
    ['?country=GB&foo=bar', 'foo'],
    ['?country=GB&Country=GB', 'Country'],
    ['?COUNTRY=GB', 'COUNTRY'],
    ['?country=GB&page=2', 'page'],
    ['?country=GB&offset=10', 'offset'],
    ['?country=GB&after=gb-00000', 'after'],
    ['?country=GB&id=x', 'id'],
    // repeated
    ['?country=GB&country=GB', 'country'],
    ['?country=GB&country=FR', 'country'],
    ['?country=GB&limit=5&limit=5', 'limit'],
    ['?country=GB&listing_type=sale&listing_type=sale', 'listing_type'],
    ['?country=GB&property_type=house&property_type=land', 'property_type'],
    ['?country=GB&cursor=abc&cursor=abc', 'cursor'],
    // empty
    ['?country=', 'country'],
    ['?country', 'country'],
    ['?country=GB&limit=', 'limit'],
    ['?country=GB&limit', 'limit'],
    ['?country=GB&listing_type=', 'listing_type'],
    ['?country=GB&property_type=', 'property_type'],
    ['?country=GB&cursor=', 'cursor'],
    // limit: malformed or out of range
    ...['0', '101', '1e1', '0x10', '%205', '5%20', '5.0', '-1', '05', '00', '+5', '1.5', 'abc', '1000', '99999999999999999999999999', '%EF%BC%95', 'Infinity', 'NaN', '5,6'].map(
      (l): [string, string] => [`?country=GB&limit=${l}`, 'limit'],
    ),
    // country
    ...['XX', 'GBR', 'g', 'ZZ', '12', 'G1', '%20GB', 'GB%20', 'G%20B', 'Great%20Britain', 'GB,FR', '%C3%89S'].map((c): [string, string] => [`?country=${c}`, 'country']),
    // enumerations
    ...['buy', 'Sale', 'SALE', 'sale%20', 'sales', 'sale,rent'].map((t): [string, string] => [`?country=GB&listing_type=${t}`, 'listing_type']),
    ...['flat', 'House', 'houses', 'land,house', 'apartment%00'].map((t): [string, string] => [`?country=GB&property_type=${t}`, 'property_type']),
  ];

  test.each(CASES)('/v1/properties%s → invalid_parameter naming %s', async (query, parameter) => {
    expectError(await getAs('std', `/v1/properties${query}`), 'invalid_parameter', { parameter });
  });

  test('a key pasted as ?api_key=<value> is refused as an unknown parameter (and never logged)', async () => {
    expectError(await getAs('std', `/v1/properties?country=GB&api_key=${v('std')}`), 'invalid_parameter', { parameter: 'api_key' });
    expectError(await getAs('adv', `/v1/properties?api_key=${encodeURIComponent(v('adv'))}&country=GB`), 'invalid_parameter', { parameter: 'api_key' });
  });
});

describe('400 invalid_parameter on GET /v1/properties/{id}', () => {
  const id = IDS.publishedGb;
  const CASES: Array<[string, string]> = [
    ['', 'country'],
    ['?', 'country'],
    ['?country=', 'country'],
    ['?country=XX', 'country'],
    ['?country=GBR', 'country'],
    ['?country=g', 'country'],
    ['?country=GB&country=GB', 'country'],
    ['?country=GB&limit=5', 'limit'],
    ['?country=GB&listing_type=sale', 'listing_type'],
    ['?country=GB&property_type=house', 'property_type'],
    ['?country=GB&cursor=abc', 'cursor'],
    ['?country=GB&foo=1', 'foo'],
    ['?limit=5&country=GB', 'limit'],
  ];
  test.each(CASES)(`/v1/properties/{id}%s → invalid_parameter naming %s`, async (query, parameter) => {
    expectError(await getAs('std', `/v1/properties/${id}${query}`), 'invalid_parameter', { parameter });
  });
});

describe('403 country_not_entitled', () => {
  test('a country outside the subscription, on the list and on an item', async () => {
    expectError(await getAs('std', '/v1/properties?country=DE'), 'country_not_entitled');
    expectError(await getAs('std', '/v1/properties?country=de&listing_type=sale'), 'country_not_entitled');
    expectError(await getAs('std', '/v1/properties?country=US'), 'country_not_entitled');
    expectError(await getAs('std', `/v1/properties/${IDS.deOnly}?country=DE`), 'country_not_entitled');
    // Checked before the data service: a withdrawn or unknown id in that country is still 403.
    expectError(await getAs('std', '/v1/properties/no-such-id?country=DE'), 'country_not_entitled');
    expectError(await getAs('adv', `/v1/properties/${IDS.frOnly}?country=ES`), 'country_not_entitled');
  });

  test('countries written in lower case in the keys file are entitled', async () => {
    expectKeyedSuccess(await getAs('lower-countries', '/v1/properties?country=GB'));
    expectKeyedSuccess(await getAs('lower-countries', '/v1/properties?country=fr'));
    expectError(await getAs('lower-countries', '/v1/properties?country=ES'), 'country_not_entitled');
  });

  test('the same key reaches its entitled countries', async () => {
    expectKeyedSuccess(await getAs('adv', `/v1/properties/${IDS.deOnly}?country=DE`));
  });
});

describe('400 invalid_cursor (basic)', () => {
  test.each([
    ['garbage', 'garbage'],
    ['cursor-shaped garbage', 'eyJhbGciOiJkaXIifQ..abc.def.ghi'],
    ['1025 characters', 'a'.repeat(1025)],
  ])('%s → invalid_cursor', async (_label, cursor) => {
    expectError(await getAs('std', `/v1/properties?country=GB&cursor=${cursor}`), 'invalid_cursor');
  });
});

describe('404 not_found for listings', () => {
  test('a withdrawn listing, an unknown id, an id of another country', async () => {
    expectError(await getAs('std', `/v1/properties/${IDS.withdrawnGb}?country=GB`), 'not_found');
    expectError(await getAs('std', '/v1/properties/no-such-listing?country=GB'), 'not_found');
    expectError(await getAs('std', `/v1/properties/${'z'.repeat(128)}?country=GB`), 'not_found');
    expectError(await getAs('std', `/v1/properties/${IDS.frOnly}?country=GB`), 'not_found');
    expectError(await getAs('adv', `/v1/properties/${IDS.publishedGb}?country=DE`), 'not_found');
    expectError(await getAs('std', `/v1/properties/${IDS.withdrawnGb.toUpperCase()}?country=GB`), 'not_found');
  });

  test.each([
    '%2e%2e',
    '%2E%2E',
    '%2e',
    '..',
    '.',
    'a%2Fb',
    'a%2fb',
    '%2F',
    '%5C',
    'a%5Cb',
    'a%20b',
    'a%00b',
    '%C3%A9',
    'a@b',
    'a:b',
    'a%25b',
    '%ZZ',
    '%',
    '%2e%2e%2f%2e%2e%2finternal',
    'a'.repeat(129),
    '%61'.repeat(129),
  ].map((id) => [id.length > 40 ? `${id.slice(0, 9)}… (${id.length} characters)` : id, id]))(
    'id %s (outside the alphabet after decoding) → not_found',
    async (_label, id) => {
      expectError(await getAs('std', `/v1/properties/${id}?country=GB`), 'not_found');
    },
  );

  test('a percent-encoded id inside the alphabet is decoded and found', async () => {
    const encoded = [...IDS.publishedGb].map((c) => `%${c.charCodeAt(0).toString(16).padStart(2, '0')}`).join('');
    const a = await getAs('std', `/v1/properties/${encoded}?country=GB`);
    expectKeyedSuccess(a);
    expect(a.body.data.id).toBe(IDS.publishedGb);
  });
});

describe('order of checks (pairs)', () => {
  test('a paused key from a wrong address → ip_not_allowed', async () => {
    expectError(await getAs('elsewhere-paused', '/v1/ping'), 'ip_not_allowed', { ip: '127.0.0.1' });
    expectError(await getAs('elsewhere-paused', '/v1/properties?country=XX'), 'ip_not_allowed', { ip: '127.0.0.1' });
  });

  test('a revoked key from a wrong address → unauthenticated', async () => {
    expectError(await getAs('elsewhere-revoked', '/v1/ping'), 'unauthenticated');
  });

  test('a Standard key with bad parameters on insights → upgrade_required', async () => {
    expectError(await getAs('std', '/v1/insights?limit=0&country=XX&foo=1'), 'upgrade_required');
  });

  test('a paused Standard key on insights → key_paused; from a wrong address → ip_not_allowed', async () => {
    expectError(await getAs('paused-std', '/v1/insights/x'), 'key_paused');
    expectError(await getAs('elsewhere', '/v1/insights/x'), 'ip_not_allowed', { ip: '127.0.0.1' });
  });

  test('a paused key with bad parameters → key_paused', async () => {
    expectError(await getAs('paused-std', '/v1/properties?country=XX&limit=0'), 'key_paused');
  });

  test('no key with bad parameters → unauthenticated', async () => {
    expectError(await get('/v1/properties?country=XX&limit=0&cursor=zz'), 'unauthenticated');
  });

  test('bad parameter + unentitled country → invalid_parameter', async () => {
    expectError(await getAs('std', '/v1/properties?country=DE&limit=0'), 'invalid_parameter', { parameter: 'limit' });
    expectError(await getAs('std', '/v1/properties?country=DE&listing_type=buy'), 'invalid_parameter', { parameter: 'listing_type' });
    expectError(await getAs('std', '/v1/properties?country=DE&foo=1'), 'invalid_parameter', { parameter: 'foo' });
    expectError(await getAs('std', '/v1/properties/de-1?country=DE&limit=3'), 'invalid_parameter', { parameter: 'limit' });
  });

  test('unentitled country + garbage cursor → country_not_entitled', async () => {
    expectError(await getAs('std', '/v1/properties?country=DE&cursor=garbage'), 'country_not_entitled');
  });

  test('bad parameter + garbage cursor → invalid_parameter', async () => {
    expectError(await getAs('std', '/v1/properties?country=GB&limit=101&cursor=garbage'), 'invalid_parameter', { parameter: 'limit' });
  });

  test('unentitled country + withdrawn listing → country_not_entitled; entitled + withdrawn → not_found', async () => {
    expectError(await getAs('std', `/v1/properties/${IDS.withdrawnGb}?country=DE`), 'country_not_entitled');
    expectError(await getAs('std', `/v1/properties/${IDS.withdrawnGb}?country=GB`), 'not_found');
  });
});

describe('logs', () => {
  test('no gateway log line contains a key value, even after ?api_key=<value> was sent', async () => {
    // One more request with the key in the URL, as a client pasting it would send it.
    await getAs('std', `/v1/ping?api_key=${v('std')}`);
    await get(`/nope?api_key=${v('adv')}&x=${v('plk')}`);
    await stack.stop(); // flushes and closes the gateway's output
    const lines = stack.gatewayOutput();
    expect(lines.some((l) => l.includes('"answered"'))).toBe(true);
    const secrets = [...stack.keyValues(), UNKNOWN_VALUE, BAD_CHECKSUM_VALUE];
    expect(linesWithSecrets(lines, secrets)).toEqual([]);
  });
});
