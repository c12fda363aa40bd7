import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ListingsFileError, loadListingsFile, parseListings } from '../../backend-mock/load-file';

const dir = mkdtempSync(path.join(os.tmpdir(), 'backend-load-file-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function write(name: string, text: string): string {
  const file = path.join(dir, name);
  writeFileSync(file, text);
  return file;
}

const good = { id: 'GB-1', country: 'GB', listing_type: 'sale', property_type: 'house' };

function startsWith(prefix: string): RegExp {
  return new RegExp(`^${prefix.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`);
}

/** The error a load throws, asserting it is the one-line kind main prints as is. */
function failure(load: () => unknown): string {
  try {
    load();
  } catch (error) {
    expect(error).toBeInstanceOf(ListingsFileError);
    const message = (error as Error).message;
    expect(message).not.toMatch(/[\r\n]/);
    return message;
  }
  throw new Error('expected the load to fail');
}

describe('loadListingsFile: accepted files', () => {
  const records = [
    { ...good, price: 250000, nested: { a: [1, 2] }, bedrooms: null },
    { id: 'a.b~c_d-E', country: 'fr', listing_type: 'rent', property_type: 'apartment', withdrawn: true },
    { id: 'GB-1', country: 'IE', listing_type: 'sale', property_type: 'land', withdrawn: false },
  ];
  const want = [
    { record: records[0], withdrawn: false },
    { record: { id: 'a.b~c_d-E', country: 'FR', listing_type: 'rent', property_type: 'apartment' }, withdrawn: true },
    { record: { id: 'GB-1', country: 'IE', listing_type: 'sale', property_type: 'land' }, withdrawn: false },
  ];

  it('reads a JSON array', () => {
    expect(loadListingsFile(write('array.json', JSON.stringify(records, null, 2)))).toEqual(want);
  });

  it('reads NDJSON with blank lines, CRLF endings and a byte-order mark', () => {
    const text = `\uFEFF${JSON.stringify(records[0])}\r\n\r\n   \n${JSON.stringify(records[1])}\n${JSON.stringify(records[2])}`;
    expect(loadListingsFile(write('lines.ndjson', text))).toEqual(want);
  });

  it('tells the format by the first non-space character, not the file name', () => {
    expect(loadListingsFile(write('array.ndjson', `\n  ${JSON.stringify(records)}`))).toEqual(want);
    expect(loadListingsFile(write('lines.json', records.map((r) => JSON.stringify(r)).join('\n')))).toEqual(want);
  });

  it('accepts empty files and empty arrays as no listings', () => {
    expect(loadListingsFile(write('empty.ndjson', ''))).toEqual([]);
    expect(loadListingsFile(write('empty.json', ' [ ] '))).toEqual([]);
  });

  it('keeps the other fields in their original order, and the flag apart', () => {
    const [listing] = parseListings('x', JSON.stringify([{ title: 't', ...good, country: 'gb', withdrawn: true, price: 1 }]));
    expect(Object.keys(listing!.record)).toEqual(['title', 'id', 'country', 'listing_type', 'property_type', 'price']);
    expect(listing!.record.country).toBe('GB');
    expect(listing!.withdrawn).toBe(true);
  });
});

describe('loadListingsFile: rejected records name the file, entry and field', () => {
  const cases: [string, unknown, string][] = [
    ['not an object', 42, 'must be a JSON object'],
    ['an array', [good], 'must be a JSON object'],
    ['null', null, 'must be a JSON object'],
    ['missing id', { ...good, id: undefined }, 'field "id": is required'],
    ['numeric id', { ...good, id: 12 }, 'field "id": must be a string'],
    ['empty id', { ...good, id: '' }, 'field "id": must be 1 to 128 characters'],
    ['id with a slash', { ...good, id: 'a/b' }, 'field "id": must be 1 to 128 characters'],
    ['id with a space', { ...good, id: 'a b' }, 'field "id": must be 1 to 128 characters'],
    ['id "."', { ...good, id: '.' }, 'field "id": must be 1 to 128 characters'],
    ['id ".."', { ...good, id: '..' }, 'field "id": must be 1 to 128 characters'],
    ['id of 129 characters', { ...good, id: 'x'.repeat(129) }, 'field "id": must be 1 to 128 characters'],
    ['missing country', { ...good, country: undefined }, 'field "country": is required'],
    ['three-letter country', { ...good, country: 'GBR' }, 'field "country": must be a two-letter country code'],
    ['numeric country', { ...good, country: 44 }, 'field "country": must be a two-letter country code'],
    ['missing listing_type', { ...good, listing_type: undefined }, 'field "listing_type": is required and must be one of sale, rent'],
    ['unknown listing_type', { ...good, listing_type: 'lease' }, 'field "listing_type": must be one of sale, rent'],
    ['upper-case listing_type', { ...good, listing_type: 'SALE' }, 'field "listing_type": must be one of sale, rent'],
    ['unknown property_type', { ...good, property_type: 'castle' }, 'field "property_type": must be one of apartment, house, land, commercial'],
    ['string withdrawn', { ...good, withdrawn: 'yes' }, 'field "withdrawn": must be a boolean'],
    ['null withdrawn', { ...good, withdrawn: null }, 'field "withdrawn": must be a boolean'],
  ];

  it.each(cases)('rejects %s in NDJSON, naming the line', (_name, bad, reason) => {
    const file = write('bad.ndjson', `${JSON.stringify(good)}\n\n${JSON.stringify({ ...good, id: 'GB-2' })}\n${JSON.stringify(bad)}\n`);
    expect(failure(() => loadListingsFile(file))).toMatch(startsWith(`LISTINGS_FILE ${file}: entry 4: ${reason}`));
  });

  it.each(cases)('rejects %s in a JSON array, naming the position', (_name, bad, reason) => {
    const file = write('bad.json', JSON.stringify([good, { ...good, id: 'GB-2' }, bad]));
    expect(failure(() => loadListingsFile(file))).toMatch(startsWith(`LISTINGS_FILE ${file}: entry 3: ${reason}`));
  });

  it('gives exactly the documented message for a bad listing_type', () => {
    const lines = Array.from({ length: 11 }, (_, i) => JSON.stringify({ ...good, id: `GB-${i}` }));
    const file = write('x.ndjson', [...lines, JSON.stringify({ ...good, id: 'GB-X', listing_type: 'let' })].join('\n'));
    expect(failure(() => loadListingsFile(file))).toBe(`LISTINGS_FILE ${file}: entry 12: field "listing_type": must be one of sale, rent`);
  });

  it('rejects a duplicate (country, id), also when the country differs only in case', () => {
    const file = write('dup.json', JSON.stringify([good, { ...good, id: 'GB-2' }, { ...good, country: 'gb', listing_type: 'rent' }]));
    expect(failure(() => loadListingsFile(file))).toBe(`LISTINGS_FILE ${file}: entry 3: field "id": duplicate of entry 1 (country GB, id GB-1)`);
  });
});

describe('loadListingsFile: unreadable or malformed files', () => {
  it('reports a missing file', () => {
    const file = path.join(dir, 'missing.json');
    expect(failure(() => loadListingsFile(file))).toMatch(startsWith(`LISTINGS_FILE ${file}: cannot read: ENOENT`));
  });

  it('reports a directory', () => {
    expect(failure(() => loadListingsFile(dir))).toMatch(startsWith(`LISTINGS_FILE ${dir}: cannot read: EISDIR`));
  });

  it('reports invalid JSON in an array file', () => {
    const file = write('broken.json', '[{"id": "a",}]');
    expect(failure(() => loadListingsFile(file))).toMatch(startsWith(`LISTINGS_FILE ${file}: invalid JSON: `));
  });

  it('reports an invalid NDJSON line by its line number', () => {
    const file = write('broken.ndjson', `${JSON.stringify(good)}\n\n{"id": \n`);
    expect(failure(() => loadListingsFile(file))).toMatch(startsWith(`LISTINGS_FILE ${file}: entry 3: invalid JSON: `));
  });

  it('treats a pretty-printed single object as NDJSON and fails on its first line', () => {
    const file = write('object.json', JSON.stringify(good, null, 2));
    expect(failure(() => loadListingsFile(file))).toMatch(startsWith(`LISTINGS_FILE ${file}: entry 1: invalid JSON: `));
  });
});
