/**
 * Pagination and cursors: walking every page of every filter yields each published listing once, in
 * a stable order, never a withdrawn one; cursors are bound to key and filters, expire, survive a
 * secret rotation only while the old secret is listed, and are refused when tampered with or too long.
 */
import {
  allPropertyNames,
  cursorSecret,
  expectError,
  expectKeyedSuccess,
  randomKeyValue,
  send,
  sleep,
  startStack,
  type Answer,
  type KeySpec,
  type Proc,
  type Stack,
  expectNoKeyValueLogged,
} from '../kit/gateway-stack';
import { fixtureListings, LISTING_TYPES, PROPERTY_TYPES, publishedListings } from '../fixtures/listings';

const LISTINGS = fixtureListings();
const BIG = { per_minute: 100_000, per_day: 1_000_000, per_month: 10_000_000 };
const key = (id: string): KeySpec => ({
  id,
  value: randomKeyValue(id),
  tier: 'standard',
  countries: ['GB', 'FR', 'ES'],
  address: '127.0.0.1',
  status: 'active',
  limits: BIG,
});
const KEYS = [key('c1'), key('c2')];

const SECRET_A = cursorSecret();
const SECRET_B = cursorSecret();

let stack: Stack;
let main: Proc; // secret A
let short: Proc; // secret A, CURSOR_TTL_SECONDS=1
let rotated: Proc; // secret B, previous A
let onlyB: Proc; // secret B alone

beforeAll(async () => {
  stack = await startStack({
    keys: KEYS,
    listings: LISTINGS,
    cursorSecret: SECRET_A,
    gateways: [
      {},
      { CURSOR_TTL_SECONDS: '1' },
      { CURSOR_SECRET: SECRET_B, CURSOR_PREVIOUS_SECRETS: `${cursorSecret()},${SECRET_A}` },
      { CURSOR_SECRET: SECRET_B },
    ],
  });
  [main, short, rotated, onlyB] = stack.gateways as [Proc, Proc, Proc, Proc];
});
afterAll(async () => {
  await stack?.stop();
});

const page = (gw: Proc, keyId: string, query: string): Promise<Answer> =>
  send(gw.url, `/v1/properties?${query}`, { headers: { 'x-api-key': stack.key(keyId).value } });

type Query = Record<string, string>;
const qs = (q: Query): string => new URLSearchParams(q).toString();

/** Walks every page; `limits` are used in turn (the last one repeats). */
async function walk(gw: Proc, keyId: string, filters: Query, limits: number[] = [100]): Promise<{ items: Array<Record<string, unknown>>; pages: number }> {
  const items: Array<Record<string, unknown>> = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const limit = limits[Math.min(pages, limits.length - 1)]!;
    const a = await page(gw, keyId, qs({ ...filters, limit: String(limit), ...(cursor ? { cursor } : {}) }));
    expectKeyedSuccess(a);
    expect(Object.keys(a.body).sort()).toEqual(['data', 'next_cursor']);
    expect(a.body.data.length).toBeLessThanOrEqual(limit);
    // A page that says more follows is a full page.
    if (a.body.next_cursor !== null) {
      expect(typeof a.body.next_cursor).toBe('string');
      expect(a.body.data).toHaveLength(limit);
    }
    items.push(...a.body.data);
    cursor = a.body.next_cursor;
    pages++;
    if (pages > 500) throw new Error('pagination does not end');
  } while (cursor !== null);
  return { items, pages };
}

const FILTERS: Query[] = [
  { country: 'GB' },
  ...LISTING_TYPES.map((t) => ({ country: 'GB', listing_type: t })),
  ...PROPERTY_TYPES.map((t) => ({ country: 'GB', property_type: t })),
  ...LISTING_TYPES.flatMap((l) => PROPERTY_TYPES.map((p) => ({ country: 'GB', listing_type: l, property_type: p }))),
  { country: 'FR' },
  { country: 'FR', listing_type: 'rent' },
  { country: 'ES' },
];

describe('pagination', () => {
  test.each(FILTERS.map((f) => [qs(f), f] as const))('%s: every published listing exactly once, stable order, none withdrawn', async (_label, filters) => {
    const expected = publishedListings(LISTINGS, filters as { country: string });
    const first = await walk(main, 'c1', filters, [20]);
    const ids = first.items.map((i) => i.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect([...ids].sort()).toEqual(expected.map((l) => l.id).sort());
    // Each listing as stored (minus the withdrawn flag).
    const byId = new Map(expected.map((l) => [l.id, l]));
    for (const item of first.items) expect(item).toStrictEqual(byId.get(item.id as string));
    expect(allPropertyNames(first.items).has('withdrawn')).toBe(false);
    expect(first.pages).toBe(Math.max(1, Math.ceil(expected.length / 20)));
    // The same walk again, with another page size and another key: the same sequence.
    const second = await walk(main, 'c2', filters, [7]);
    expect(second.items.map((i) => i.id)).toEqual(ids);
  });

  test('the whole of GB with limit=100, limit=1 and changing limits gives the same sequence', async () => {
    const expected = publishedListings(LISTINGS, { country: 'GB' });
    expect(expected).toHaveLength(225);
    const big = await walk(main, 'c1', { country: 'GB' }, [100]);
    expect(big.pages).toBe(3);
    const ids = big.items.map((i) => i.id);
    expect([...ids].sort()).toEqual(expected.map((l) => l.id).sort());
    const mixed = await walk(main, 'c1', { country: 'GB' }, [1, 50, 3, 100, 2, 17]);
    expect(mixed.items.map((i) => i.id)).toEqual(ids);
    const lowerCase = await walk(main, 'c1', { country: 'gb' }, [60]);
    expect(lowerCase.items.map((i) => i.id)).toEqual(ids);
  });

  test('limit=1 walks through every id as a position, the 128-character one included', async () => {
    const filters = { country: 'GB', listing_type: 'rent', property_type: 'apartment' };
    const expected = publishedListings(LISTINGS, filters).map((l) => l.id);
    expect(expected.some((id) => id.length === 128)).toBe(true);
    const reference = (await walk(main, 'c1', filters, [100])).items.map((i) => i.id);
    const one = await walk(main, 'c1', filters, [1]);
    expect(one.pages).toBe(expected.length);
    expect(one.items.map((i) => i.id)).toEqual(reference);
  });

  test('limit may change between pages', async () => {
    const all = (await walk(main, 'c1', { country: 'GB' }, [100])).items.map((i) => i.id);
    const p1 = await page(main, 'c1', 'country=GB&limit=5');
    expectKeyedSuccess(p1);
    const p2 = await page(main, 'c1', qs({ country: 'GB', limit: '50', cursor: p1.body.next_cursor }));
    expectKeyedSuccess(p2);
    expect(p2.body.data.map((i: { id: string }) => i.id)).toEqual(all.slice(5, 55));
    const p3 = await page(main, 'c1', qs({ country: 'GB', cursor: p2.body.next_cursor }));
    expectKeyedSuccess(p3);
    expect(p3.body.data.map((i: { id: string }) => i.id)).toEqual(all.slice(55, 75)); // default limit 20
  });

  test('the last page has next_cursor null', async () => {
    const a = await page(main, 'c1', 'country=FR&limit=100');
    expectKeyedSuccess(a);
    expect(a.body.next_cursor).toBeNull();
    expect(a.body.data).toHaveLength(publishedListings(LISTINGS, { country: 'FR' }).length);
    // Exactly full last page: no cursor to an empty page.
    const n = publishedListings(LISTINGS, { country: 'GB', listing_type: 'sale', property_type: 'land' }).length;
    const exact = await page(main, 'c1', `country=GB&listing_type=sale&property_type=land&limit=${n}`);
    expectKeyedSuccess(exact);
    expect(exact.body.data).toHaveLength(n);
    expect(exact.body.next_cursor).toBeNull();
  });
});

/** A first-page cursor for `query` from `gw`. */
async function cursorFor(gw: Proc, keyId: string, query: string): Promise<string> {
  const a = await page(gw, keyId, query);
  expectKeyedSuccess(a);
  expect(typeof a.body.next_cursor).toBe('string');
  return a.body.next_cursor as string;
}

/** `cursor` with the character at `index` replaced by another base64url character. */
function changeCharAt(cursor: string, index: number): string {
  const c = cursor[index]!;
  const replacement = c === 'A' ? 'B' : 'A';
  return cursor.slice(0, index) + replacement + cursor.slice(index + 1);
}

describe('invalid_cursor', () => {
  test('garbage', async () => {
    for (const garbage of ['x', 'garbage', 'null', '0', '....', 'a..b.c.d', 'eyJhbGciOiJkaXIiLCJlbmMiOiJBMjU2R0NNIn0..AAAA.BBBB.CCCC', Buffer.from('{"p":"gb-00000"}').toString('base64url'), 'gb-00000']) {
      expectError(await page(main, 'c1', qs({ country: 'GB', cursor: garbage })), 'invalid_cursor');
    }
  });

  test('one character changed anywhere (header, iv, ciphertext, tag)', async () => {
    const cursor = await cursorFor(main, 'c1', 'country=GB&limit=5');
    expectKeyedSuccess(await page(main, 'c1', qs({ country: 'GB', limit: '5', cursor })));
    // Positions in the middle of each dot-separated part (never a part's last character, whose
    // low bits may be padding).
    const parts = cursor.split('.');
    let offset = 0;
    const positions: number[] = [];
    for (const part of parts) {
      if (part.length >= 3) positions.push(offset + Math.floor(part.length / 2), offset);
      offset += part.length + 1;
    }
    expect(positions.length).toBeGreaterThanOrEqual(8);
    for (const position of positions) {
      const tampered = changeCharAt(cursor, position);
      expect(tampered).not.toBe(cursor);
      expectError(await page(main, 'c1', qs({ country: 'GB', limit: '5', cursor: tampered })), 'invalid_cursor');
    }
    // The last character of each part changed only in bits that base64url leaves unused: still
    // another string, so still refused.
    const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    offset = 0;
    let padded = 0;
    for (const part of parts) {
      if (part.length % 4 === 2 || part.length % 4 === 3) {
        const end = offset + part.length - 1;
        const flipped = ALPHABET[ALPHABET.indexOf(cursor[end]!) ^ 1]!;
        const tampered = cursor.slice(0, end) + flipped + cursor.slice(end + 1);
        expect(Buffer.from(tampered.split('.')[parts.indexOf(part)]!, 'base64url')).toEqual(Buffer.from(part, 'base64url'));
        expectError(await page(main, 'c1', qs({ country: 'GB', limit: '5', cursor: tampered })), 'invalid_cursor');
        padded++;
      }
      offset += part.length + 1;
    }
    expect(padded).toBeGreaterThan(0);
    // Truncated, extended, case-flipped.
    for (const variant of [cursor.slice(0, -4), `${cursor}AAAA`, `${cursor}.x`, cursor.toUpperCase(), cursor.split('.').reverse().join('.')]) {
      expectError(await page(main, 'c1', qs({ country: 'GB', limit: '5', cursor: variant })), 'invalid_cursor');
    }
  });

  test("another key's cursor", async () => {
    const cursor = await cursorFor(main, 'c1', 'country=GB');
    expectError(await page(main, 'c2', qs({ country: 'GB', cursor })), 'invalid_cursor');
    expectKeyedSuccess(await page(main, 'c1', qs({ country: 'GB', cursor })));
  });

  test('other filters, including adding or removing an optional filter', async () => {
    const gb = await cursorFor(main, 'c1', 'country=GB&limit=3');
    const sale = await cursorFor(main, 'c1', 'country=GB&listing_type=sale&limit=3');
    const saleHouse = await cursorFor(main, 'c1', 'country=GB&listing_type=sale&property_type=house&limit=3');
    const land = await cursorFor(main, 'c1', 'country=GB&property_type=land&limit=3');
    const cases: Array<[string, Query]> = [
      [gb, { country: 'FR' }],
      [gb, { country: 'GB', listing_type: 'sale' }],
      [gb, { country: 'GB', property_type: 'house' }],
      [sale, { country: 'GB' }],
      [sale, { country: 'GB', listing_type: 'rent' }],
      [sale, { country: 'GB', listing_type: 'sale', property_type: 'house' }],
      [sale, { country: 'FR', listing_type: 'sale' }],
      [saleHouse, { country: 'GB', listing_type: 'sale' }],
      [saleHouse, { country: 'GB', property_type: 'house' }],
      [saleHouse, { country: 'GB', listing_type: 'sale', property_type: 'land' }],
      [land, { country: 'GB', listing_type: 'sale', property_type: 'land' }],
      [land, { country: 'GB', property_type: 'house' }],
    ];
    for (const [cursor, filters] of cases) {
      expectError(await page(main, 'c1', qs({ ...filters, cursor })), 'invalid_cursor');
    }
    // With the filters they were issued for, each works (limit may differ).
    expectKeyedSuccess(await page(main, 'c1', qs({ country: 'GB', cursor: gb, limit: '9' })));
    expectKeyedSuccess(await page(main, 'c1', qs({ country: 'GB', listing_type: 'sale', cursor: sale })));
    expectKeyedSuccess(await page(main, 'c1', qs({ property_type: 'house', country: 'GB', listing_type: 'sale', cursor: saleHouse })));
    expectKeyedSuccess(await page(main, 'c1', qs({ country: 'GB', property_type: 'land', cursor: land })));
  });

  test('expired (CURSOR_TTL_SECONDS=1, used after 2.1 s)', async () => {
    // Expiry has one-second granularity: start just after a second boundary, so the control
    // (issued and used at once) cannot straddle one.
    await sleep(1000 - (Date.now() % 1000) + 20);
    const fresh = await cursorFor(short, 'c1', 'country=GB&limit=5');
    expectKeyedSuccess(await page(short, 'c1', qs({ country: 'GB', limit: '5', cursor: fresh })));
    const stale = await cursorFor(short, 'c1', 'country=GB&limit=5');
    await sleep(2100);
    expectError(await page(short, 'c1', qs({ country: 'GB', limit: '5', cursor: stale })), 'invalid_cursor');
    // The same secret is shared: the expired cursor is refused by every instance.
    expectError(await page(main, 'c1', qs({ country: 'GB', limit: '5', cursor: stale })), 'invalid_cursor');
  });

  test('instances sharing CURSOR_SECRET accept each other\'s cursors', async () => {
    const cursor = await cursorFor(main, 'c1', 'country=GB&limit=5');
    const here = await page(main, 'c1', qs({ country: 'GB', limit: '5', cursor }));
    const there = await page(short, 'c1', qs({ country: 'GB', limit: '5', cursor }));
    expectKeyedSuccess(there);
    expect(there.body.data).toStrictEqual(here.body.data);
  });

  test('rotated secret: accepted while the old secret is listed in CURSOR_PREVIOUS_SECRETS, refused without it', async () => {
    const cursor = await cursorFor(main, 'c1', 'country=GB&limit=5');
    const expected = await page(main, 'c1', qs({ country: 'GB', limit: '5', cursor }));
    expectKeyedSuccess(expected);
    const accepted = await page(rotated, 'c1', qs({ country: 'GB', limit: '5', cursor }));
    expectKeyedSuccess(accepted);
    expect(accepted.body.data).toStrictEqual(expected.body.data);
    expectError(await page(onlyB, 'c1', qs({ country: 'GB', limit: '5', cursor })), 'invalid_cursor');
    // Cursors the rotated instance issues use the new secret.
    const fresh = await cursorFor(rotated, 'c1', 'country=GB&limit=5');
    expectKeyedSuccess(await page(onlyB, 'c1', qs({ country: 'GB', limit: '5', cursor: fresh })));
    expectError(await page(main, 'c1', qs({ country: 'GB', limit: '5', cursor: fresh })), 'invalid_cursor');
  });

  test('over 1024 characters', async () => {
    const cursor = await cursorFor(main, 'c1', 'country=GB&limit=5');
    expect(cursor.length).toBeLessThanOrEqual(1024);
    for (const long of ['a'.repeat(1025), `${cursor}${'A'.repeat(1025 - cursor.length)}`, 'x'.repeat(6000)]) {
      expect(long.length).toBeGreaterThan(1024);
      expectError(await page(main, 'c1', qs({ country: 'GB', cursor: long })), 'invalid_cursor');
    }
  });
});

describe('logs', () => {
  test('no gateway log line contains a key value', async () => {
    await expectNoKeyValueLogged(stack);
  });
});
