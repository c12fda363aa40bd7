import { generateListings } from '../../backend-mock/generate';
import { ListingRecord, LISTING_TYPES, ListingType, PROPERTY_TYPES, PropertyType, StoredListing, toFlatListing } from '../../backend-mock/listing';
import { firstAfter, ListingFilter, ListingIndex } from '../../backend-mock/listing-index';

const listings = generateListings(30000);
const index = new ListingIndex(listings);

function listing(id: string, country = 'GB', withdrawn = false): StoredListing {
  return { record: { id, country, listing_type: 'sale', property_type: 'house' }, withdrawn };
}

/** What a filter should list: published matches in code-unit id order, computed the slow, obvious way. */
function expected(filter: ListingFilter): string[] {
  return listings
    .filter(({ record: r, withdrawn }) => !withdrawn && r.country === filter.country
      && (filter.listingType === undefined || r.listing_type === filter.listingType)
      && (filter.propertyType === undefined || r.property_type === filter.propertyType))
    .map((l) => l.record.id)
    .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

function walk(filter: ListingFilter, limit: number): ListingRecord[][] {
  const pages: ListingRecord[][] = [];
  let after: string | undefined;
  for (;;) {
    const page = index.page(filter, after, limit);
    pages.push(page.items);
    if (page.nextAfter === null) return pages;
    expect(page.nextAfter).toBe(page.items[page.items.length - 1]!.id);
    after = page.nextAfter;
  }
}

const filters: ListingFilter[] = [];
for (const country of ['GB', 'SE']) {
  const listingTypes: (ListingType | undefined)[] = [undefined, ...LISTING_TYPES];
  const propertyTypes: (PropertyType | undefined)[] = [undefined, ...PROPERTY_TYPES];
  for (const listingType of listingTypes) {
    for (const propertyType of propertyTypes) {
      const filter: ListingFilter = { country };
      if (listingType !== undefined) filter.listingType = listingType;
      if (propertyType !== undefined) filter.propertyType = propertyType;
      filters.push(filter);
    }
  }
}

describe('ListingIndex pages', () => {
  it.each(filters.map((f) => [JSON.stringify(f), f] as const))('walks %s: each published match once, in id order', (_name, filter) => {
    const want = expected(filter);
    for (const limit of [1000, 37]) {
      const pages = walk(filter, limit);
      const items = pages.flat();
      expect(items.map((l) => l.id)).toEqual(want);
      expect(pages.slice(0, -1).filter((page) => page.length !== limit)).toEqual([]);
      expect(items.filter((item) => 'withdrawn' in item)).toEqual([]);
    }
  });

  it('counts stored and published listings', () => {
    expect(index.size).toBe(listings.length);
    expect(index.publishedCount).toBe(listings.filter((l) => !l.withdrawn).length);
    expect(index.publishedCount).toBeLessThan(index.size);
  });

  it('never lists withdrawn listings, and lists the records themselves', () => {
    const withdrawn = new Set(listings.filter((l) => l.withdrawn).map((l) => l.record.id));
    const byId = new Map(listings.map((l) => [l.record.id, l.record]));
    const items = walk({ country: 'DE' }, 1000).flat();
    expect(items.length).toBeGreaterThan(0);
    expect(items.filter((item) => withdrawn.has(item.id))).toEqual([]);
    expect(items.filter((item) => item !== byId.get(item.id))).toEqual([]);
  });

  it('ends with next_after null when the last page is exactly full', () => {
    const all = expected({ country: 'IE' });
    const page = index.page({ country: 'IE' }, all[all.length - 11], 10);
    expect(page.items.map((l) => l.id)).toEqual(all.slice(-10));
    expect(page.nextAfter).toBeNull();
    expect(index.page({ country: 'IE' }, all[all.length - 1], 10)).toEqual({ items: [], nextAfter: null });
  });

  it('starts a deep page right after the position, which need not be an existing id', () => {
    const all = expected({ country: 'GB' });
    const deep = all.length - 5;
    expect(index.page({ country: 'GB' }, all[deep], 3).items.map((l) => l.id)).toEqual(all.slice(deep + 1, deep + 4));
    // A position between two ids (a listing withdrawn since the page was served, say).
    const between = `${all[deep]!}0`;
    expect(index.page({ country: 'GB' }, between, 2).items.map((l) => l.id)).toEqual(all.slice(deep + 1, deep + 3));
    expect(index.page({ country: 'GB' }, '', 1).items[0]!.id).toBe(all[0]);
    expect(index.page({ country: 'GB' }, 'ZZ', 5)).toEqual({ items: [], nextAfter: null });
  });

  it('gives an empty page for a country without listings', () => {
    expect(index.page({ country: 'US' }, undefined, 20)).toEqual({ items: [], nextAfter: null });
    expect(index.page({ country: 'US', listingType: 'rent', propertyType: 'land' }, 'x', 20)).toEqual({ items: [], nextAfter: null });
  });

  it('orders by code units, so upper case sorts before lower case', () => {
    const small = new ListingIndex(['b', 'B', 'a-1', 'a.1', '~', '0'].map((id) => listing(id)));
    expect(small.page({ country: 'GB' }, undefined, 10).items.map((l) => l.id)).toEqual(['0', 'B', 'a-1', 'a.1', 'b', '~']);
  });
});

describe('firstAfter (the binary search behind every page)', () => {
  const sorted = Array.from({ length: 100_000 }, (_, i) => ({ id: `ID-${String(i).padStart(6, '0')}` }) as ListingRecord);

  it('finds the first id greater than the position', () => {
    expect(firstAfter(sorted, 'ID-000000')).toBe(1);
    expect(firstAfter(sorted, 'ID-049999')).toBe(50000);
    expect(firstAfter(sorted, 'ID-0499995')).toBe(50000);
    expect(firstAfter(sorted, 'ID-099999')).toBe(100_000);
    expect(firstAfter(sorted, 'A')).toBe(0);
    expect(firstAfter([], 'A')).toBe(0);
  });

  it('reads O(log n) elements however deep the position is', () => {
    let reads = 0;
    const counted = new Proxy(sorted, {
      get(target, key, receiver) {
        if (typeof key === 'string' && /^\d+$/.test(key)) reads += 1;
        return Reflect.get(target, key, receiver) as unknown;
      },
    });
    for (const position of ['ID-000010', 'ID-050000', 'ID-099990']) {
      reads = 0;
      firstAfter(counted, position);
      expect(reads).toBeLessThanOrEqual(Math.ceil(Math.log2(sorted.length)) + 1);
    }
  });
});

describe('ListingIndex.get', () => {
  it('finds published and withdrawn listings with their flag, as copies', () => {
    const withdrawn = listings.find((l) => l.withdrawn)!;
    const published = listings.find((l) => !l.withdrawn)!;
    expect(index.get(withdrawn.record.country, withdrawn.record.id)).toEqual({ ...withdrawn.record, withdrawn: true });
    expect(index.get(published.record.country, published.record.id)).toEqual(toFlatListing(published));
    const copy = index.get(published.record.country, published.record.id)!;
    copy.title = 'changed';
    expect(index.get(published.record.country, published.record.id)!.title).toBe(published.record.title);
  });

  it('misses unknown ids and ids of another country', () => {
    const gb = listings.find((l) => l.record.country === 'GB')!.record;
    expect(index.get('GB', 'GB-NOPE')).toBeUndefined();
    expect(index.get('FR', gb.id)).toBeUndefined();
    expect(index.get('XX', gb.id)).toBeUndefined();
  });

  it('keeps the same id apart in different countries, and rejects duplicates within one', () => {
    const twins = new ListingIndex([listing('same'), listing('same', 'FR', true)]);
    expect(twins.get('GB', 'same')!.withdrawn).toBe(false);
    expect(twins.get('FR', 'same')!.withdrawn).toBe(true);
    expect(() => new ListingIndex([listing('same'), listing('same', 'GB', true)])).toThrow(/duplicate/);
  });
});
