import fc from 'fast-check';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import { generateListings } from '../../backend-mock/generate';
import { ListingIndex } from '../../backend-mock/listing-index';
import { createBackendServer } from '../../backend-mock/server';
import { isPrivateField, passThroughItems } from '../../gateway/upstream/page-json';

type Page = { items: unknown[]; next_after: string | null };

/** What the gateway must send for a page, computed the slow, obvious way (the gateway's own rule for private fields). */
function cleanedItems(page: Page): unknown[] {
  return (page.items as Array<Record<string, unknown>>)
    .filter((item) => item.withdrawn !== true)
    .map((item) => Object.fromEntries(Object.entries(item).filter(([field]) => !isPrivateField(field))));
}

/** What a client receives when the cleaned items are serialised (the slower path's answer). */
const expected = (page: Page): unknown => JSON.parse(JSON.stringify(cleanedItems(page)));

/** The listings as the gateway would send them (in its envelope): the pass-through text when it is allowed, else the cleaned items. */
function sent(text: string): unknown {
  const page = JSON.parse(text) as Page;
  const raw = passThroughItems(text, page);
  const envelope = `{"data":${raw ?? JSON.stringify(cleanedItems(page))},"next_cursor":null}`;
  return (JSON.parse(envelope) as { data: unknown }).data;
}

const listing = { id: 'GB-1', country: 'GB', title: 'House', price: 1 };

describe('passThroughItems', () => {
  it('passes on the data service\'s own text when it is exactly the clean items array', () => {
    const text = JSON.stringify({ items: [listing, { ...listing, id: 'GB-2' }], next_after: 'GB-2' });
    expect(passThroughItems(text, JSON.parse(text) as Page)).toBe(JSON.stringify([listing, { ...listing, id: 'GB-2' }]));
    const last = JSON.stringify({ items: [listing], next_after: null });
    expect(passThroughItems(last, JSON.parse(last) as Page)).toBe(JSON.stringify([listing]));
    const empty = JSON.stringify({ items: [], next_after: null });
    expect(passThroughItems(empty, JSON.parse(empty) as Page)).toBe('[]');
  });

  it.each([
    ['a withdrawn listing', `{"items":[${JSON.stringify({ ...listing, withdrawn: true })}],"next_after":null}`],
    ['a withdrawn flag set to false (stripped)', `{"items":[${JSON.stringify({ ...listing, withdrawn: false })}],"next_after":null}`],
    ['a storage field', `{"items":[${JSON.stringify({ ...listing, _shard: 3 })}],"next_after":null}`],
    ['a storage field written with an escape', `{"items":[{"id":"GB-1","country":"GB","\\u005fshard":3}],"next_after":null}`],
    ['withdrawn written with an escape', `{"items":[{"id":"GB-1","country":"GB","withdr\\u0061wn":true}],"next_after":null}`],
    ['a duplicated items key (the parser keeps the last)', `{"items":[{"id":"GB-9","country":"GB","withdrawn":true}],"next_after":null,"items":[${JSON.stringify(listing)}],"next_after":null}`],
    ['a duplicated next_after key', `{"items":[${JSON.stringify(listing)}],"next_after":"x","next_after":null}`],
    ['an extra member between', `{"items":[${JSON.stringify(listing)}],"secret":"s","next_after":null}`],
    ['next_after first', `{"next_after":null,"items":[${JSON.stringify(listing)}]}`],
    ['whitespace between members', `{"items": [${JSON.stringify(listing)}], "next_after": null}`],
    ['a position written with an escape', `{"items":[${JSON.stringify(listing)}],"next_after":"GB\\u002d1"}`],
    ['a listing with its own items field', `{"items":[{"id":"GB-1","country":"GB","items":[{"_x":1}]}],"next_after":null}`],
    ['a number that overflows to Infinity', `{"items":[{"id":"GB-1","country":"GB","price":1e400}],"next_after":null}`],
    ['a number in exponent form', `{"items":[{"id":"GB-1","country":"GB","price":1.5E3}],"next_after":null}`],
    ['a negative zero', `{"items":[{"id":"GB-1","country":"GB","area":-0}],"next_after":null}`],
    ['a negative zero with decimals', `{"items":[{"id":"GB-1","country":"GB","area":-0.000}],"next_after":null}`],
    ['an integer beyond 2^53', `{"items":[{"id":"GB-1","country":"GB","area":9007199254740993}],"next_after":null}`],
  ])('refuses the shortcut for %s, and the answer is the cleaned items', (_label, text) => {
    const page = JSON.parse(text) as Page;
    expect(passThroughItems(text, page)).toBeUndefined();
    expect(sent(text)).toEqual(expected(page));
  });

  it('gives the same listings as the slow path for any page a data service could send (property)', () => {
    const field = fc.oneof(fc.constantFrom('id', 'country', 'title', 'withdrawn', '_shard', '__proto__', 'items', 'next_after'), fc.string({ maxLength: 8 }));
    const value = fc.oneof(
      fc.string({ maxLength: 12 }),
      fc.boolean(),
      fc.integer(),
      fc.double({ noNaN: true, noDefaultInfinity: true }),
      fc.constant(null),
      fc.constantFrom('"_', '\\u0041', '"withdrawn"', 'items', -0, 0.1, -0.205749, 51.545261, 1e21, 5e-324, Number.MAX_SAFE_INTEGER + 2),
    );
    const item = fc.dictionary(field, value, { maxKeys: 6 }).map((fields) => ({ ...fields, id: 'GB-1', country: 'GB' }));
    const page = fc.record({ items: fc.array(item, { maxLength: 4 }), next_after: fc.oneof(fc.constant(null), fc.string({ maxLength: 10 })) });
    let shortcuts = 0;
    fc.assert(
      fc.property(page, fc.boolean(), (p, spaced) => {
        // Compact, as a data service writes it; or with whitespace inside the listings only, which still may pass.
        const text = spaced ? `{"items":${JSON.stringify(p.items, null, 1)},"next_after":${JSON.stringify(p.next_after)}}` : JSON.stringify(p);
        if (passThroughItems(text, JSON.parse(text) as Page) !== undefined) shortcuts++;
        expect(sent(text)).toEqual(expected(JSON.parse(text) as Page));
      }),
      { seed: 20261121, numRuns: 2000 },
    );
    expect(shortcuts).toBeGreaterThan(200); // both paths were exercised
  });

  it('takes the shortcut for the pages the data service really sends, and they mean the same as the cleaned items', async () => {
    const server = createBackendServer(new ListingIndex(generateListings(3000)), pino({ level: 'silent' }));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/internal/v1/listings?country=GB&limit=50`;
      let after: string | null = null;
      let pages = 0;
      let shortcuts = 0;
      do {
        const text: string = await (await fetch(after === null ? base : `${base}&after=${encodeURIComponent(after)}`)).text();
        const page = JSON.parse(text) as Page;
        if (passThroughItems(text, page) !== undefined) shortcuts++;
        expect(sent(text)).toEqual(expected(page));
        pages++;
        after = page.next_after;
      } while (after !== null);
      expect(pages).toBeGreaterThan(3);
      expect(shortcuts).toBe(pages);
    } finally {
      server.close();
    }
  });
});
