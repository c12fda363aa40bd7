import fc from 'fast-check';
import { generateListings } from '../../backend-mock/generate';
import { checkPageBytes } from '../../gateway/upstream/page-bytes';
import { isPrivateField } from '../../gateway/upstream/page-json';

const clean = (text: string | Buffer): string => checkPageBytes(typeof text === 'string' ? Buffer.from(text) : text);

/** What `clean` promises, checked the slow, obvious way: JSON, an array of listings, nothing private. */
function holdsTheProof(bytes: Buffer): void {
  const value = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes)) as unknown;
  expect(Array.isArray(value)).toBe(true);
  for (const item of value as unknown[]) {
    expect(typeof item === 'object' && item !== null && !Array.isArray(item)).toBe(true);
    const listing = item as Record<string, unknown>;
    expect(typeof listing.id).toBe('string');
    expect(typeof listing.country).toBe('string');
    expect(Object.keys(listing).filter(isPrivateField)).toEqual([]);
  }
}

describe('checkPageBytes', () => {
  it('passes the data service\'s own pages', () => {
    const listings = generateListings(200, 7).filter((l) => !l.withdrawn).map((l) => l.record);
    const bytes = Buffer.from(JSON.stringify(listings));
    expect(clean(bytes)).toBe('clean');
    holdsTheProof(bytes);
    expect(clean('[]')).toBe('clean');
  });

  it.each([
    ['escapes and UTF-8 in values', '[{"id":"a","country":"GB","t":"\\"\\\\\\/\\b\\f\\n\\r\\t\\u00e9 é ☃"}]'],
    ['a backslash before the closing quote', '[{"id":"a\\\\","country":"GB"}]'],
    ['numbers of every form', '[{"id":"a","country":"GB","n":[0]}]'.replace(',"n":[0]', ',"a":0,"b":-0,"c":1.50,"d":1E2,"e":-2.5e-3,"f":12345678901234567890')],
    ['literals', '[{"id":"a","country":"GB","a":true,"b":false,"c":null}]'],
  ])('passes %s', (_label, text) => {
    expect(clean(text)).toBe('clean');
    holdsTheProof(Buffer.from(text));
  });

  it.each([
    ['a withdrawn listing', '[{"id":"a","country":"GB","withdrawn":true}]'],
    ['a storage field', '[{"id":"a","country":"GB","_x":1}]'],
    ['a key with an escape', '[{"id":"a","country":"GB","\\u005fx":1}]'],
    ['a repeated id', '[{"id":"a","country":"GB","id":"b"}]'],
    ['an id that is not a string', '[{"id":1,"country":"GB"}]'],
    ['no country', '[{"id":"a"}]'],
    ['members in another order', '[{"country":"GB","id":"a"}]'],
    ['whitespace', '[ {"id":"a","country":"GB"}]'],
    ['a nested value', '[{"id":"a","country":"GB","x":{}}]'],
    ['not an array', '{"id":"a","country":"GB"}'],
    ['a trailing comma', '[{"id":"a","country":"GB"},]'],
    ['cut short', '[{"id":"a","country":"GB"}'],
    ['trailing bytes', '[{"id":"a","country":"GB"}]x'],
    ['a raw control character in a string', '[{"id":"a\n","country":"GB"}]'],
    ['an unknown escape', '[{"id":"a\\q","country":"GB"}]'],
    ['a leading zero', '[{"id":"a","country":"GB","n":01}]'],
    ['a bare minus', '[{"id":"a","country":"GB","n":-}]'],
    ['an unquoted word', '[{"id":"a","country":"GB","n":tru}]'],
    ['an empty key', '[{"id":"a","country":"GB","":1}]'],
  ])('refuses %s', (_label, text) => {
    expect(clean(text)).toBe('other');
  });

  it('refuses bytes that are not UTF-8', () => {
    expect(clean(Buffer.concat([Buffer.from('[{"id":"a'), Buffer.from([0xc3]), Buffer.from('","country":"GB"}]')]))).toBe('other');
  });

  it('says clean only of what holds the proof, for any page and any damage to it (property)', () => {
    const key = fc.oneof(fc.constantFrom('id', 'country', 'title', 'withdrawn', '_shard', 'price', 'x"y', 'a\\b'), fc.string({ maxLength: 6 }));
    const value = fc.oneof(fc.string({ maxLength: 8 }), fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.boolean(), fc.constant(null), fc.constant({}), fc.constant([1]));
    const listing = fc.tuple(fc.option(fc.string({ maxLength: 6 }), { nil: undefined }), fc.option(fc.constantFrom('GB', 'FR', 1), { nil: undefined }), fc.array(fc.tuple(key, value), { maxLength: 4 }))
      .map(([id, country, rest]) => {
        const members = [...(id === undefined ? [] : [['id', id]]), ...(country === undefined ? [] : [['country', country]]), ...rest];
        return `{${members.map(([k, v]) => `${JSON.stringify(k)}:${JSON.stringify(v)}`).join(',')}}`;
      });
    const pageText = fc.array(listing, { maxLength: 4 }).map((items) => `[${items.join(',')}]`);
    // Damage: nothing, a cut, a byte changed, a byte inserted.
    const damaged = fc.tuple(pageText, fc.nat(), fc.integer({ min: 0, max: 255 }), fc.constantFrom('none', 'cut', 'change', 'insert')).map(([text, at, byte, how]) => {
      const b = Buffer.from(text);
      const i = b.length ? at % b.length : 0;
      if (how === 'cut') return b.subarray(0, i);
      if (how === 'change') { const c = Buffer.from(b); if (c.length) c[i] = byte; return c; }
      if (how === 'insert') return Buffer.concat([b.subarray(0, i), Buffer.from([byte]), b.subarray(i)]);
      return b;
    });
    let passed = 0;
    fc.assert(
      fc.property(damaged, (bytes) => {
        if (checkPageBytes(bytes) !== 'clean') return;
        passed++;
        holdsTheProof(bytes);
      }),
      { numRuns: 3000, seed: 18 },
    );
    expect(passed).toBeGreaterThan(50); // the property did test the clean verdict
  });
});
