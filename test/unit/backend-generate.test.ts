import { COUNTRIES } from '../../backend-mock/geography';
import { EPOCH, GeneratedRecord, generateListings } from '../../backend-mock/generate';
import { isValidId, LISTING_TYPES, PROPERTY_TYPES, toFlatListing, toStoredListing } from '../../backend-mock/listing';

const COUNT = 20000;
const stored = generateListings(COUNT);
const listings: GeneratedRecord[] = stored.map((l) => l.record);

describe('generateListings', () => {
  it('gives the same listings on every run, and other listings for another seed', () => {
    // Compared as JSON: stricter than toEqual (field order counts too) and far faster on 20,000 records.
    expect(JSON.stringify(generateListings(COUNT)) === JSON.stringify(stored)).toBe(true);
    expect(JSON.stringify(generateListings(500))).toBe(JSON.stringify(stored.slice(0, 500)));
    const other = generateListings(500, 7);
    expect(other.map((l) => l.record.id)).not.toEqual(listings.slice(0, 500).map((l) => l.id));
  });

  it('generates exactly the requested count, zero included', () => {
    expect(stored).toHaveLength(COUNT);
    expect(generateListings(0)).toEqual([]);
    expect(generateListings(1)).toHaveLength(1);
  });

  it('spreads listings over all twelve countries, unevenly', () => {
    const perCountry = new Map<string, number>();
    for (const l of listings) perCountry.set(l.country, (perCountry.get(l.country) ?? 0) + 1);
    expect(perCountry.size).toBeGreaterThanOrEqual(10);
    expect([...perCountry.keys()].sort()).toEqual(['AT', 'BE', 'DE', 'ES', 'FR', 'GB', 'IE', 'IT', 'NL', 'PL', 'PT', 'SE']);
    const counts = [...perCountry.values()];
    expect(Math.max(...counts)).toBeGreaterThan(2 * Math.min(...counts));
  });

  it('withdraws about 5% of listings', () => {
    const share = stored.filter((l) => l.withdrawn).length / COUNT;
    expect(share).toBeGreaterThan(0.03);
    expect(share).toBeLessThan(0.07);
  });

  it('gives ids that are valid, carry the country prefix and are unique per country', () => {
    const bad = listings.filter((l) => !isValidId(l.id) || !new RegExp(`^${l.country}-[0-9A-Z]{8}$`).test(l.id));
    expect(bad).toEqual([]);
    expect(new Set(listings.map((l) => `${l.country}/${l.id}`)).size).toBe(COUNT);
  });

  it('produces listings the file loader would accept unchanged', () => {
    const reloaded = stored.map((l) => toStoredListing(JSON.parse(JSON.stringify(toFlatListing(l)))));
    expect(JSON.stringify(reloaded) === JSON.stringify(stored)).toBe(true);
  });

  it('fills every field with a plausible value', () => {
    const currencies = new Map(COUNTRIES.map((c) => [c.code, c.currency]));
    const localities = new Map(COUNTRIES.map((c) => [c.code, new Map(c.localities.map((l) => [l.name, l]))]));
    const isCount = (v: unknown): boolean => typeof v === 'number' && Number.isInteger(v) && v >= 0;
    const isPositive = (v: unknown): boolean => typeof v === 'number' && v > 0;
    const oldest = EPOCH - 2 * 365 * 24 * 3600 * 1000;
    // Checked with plain code and reported together: an expect() per field of 20,000 listings is slow.
    const problems: string[] = [];
    for (const l of listings) {
      const locality = localities.get(l.country)?.get(l.locality);
      const published = Date.parse(l.published_at);
      const checks: [string, boolean][] = [
        ['listing_type', (LISTING_TYPES as readonly string[]).includes(l.listing_type)],
        ['property_type', (PROPERTY_TYPES as readonly string[]).includes(l.property_type)],
        ['currency', l.currency === currencies.get(l.country)],
        ['locality', locality !== undefined],
        ['region', l.region === locality?.region],
        ['latitude', locality !== undefined && Math.abs(l.latitude - locality.latitude) < 0.1],
        ['longitude', locality !== undefined && Math.abs(l.longitude - locality.longitude) < 0.15],
        ['title', l.title.endsWith(` in ${l.locality}`)],
        ['postal_code', /^[0-9A-Z][0-9A-Z -]+$/.test(l.postal_code)],
        ['price', isPositive(l.price)],
        ['published_at', /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/.test(l.published_at) && published < EPOCH && published >= oldest],
        ['bedrooms', l.property_type === 'land' || l.property_type === 'commercial' ? l.bedrooms === null : isCount(l.bedrooms)],
        ['bathrooms', l.property_type === 'land' ? l.bathrooms === null : isCount(l.bathrooms)],
        ['floor_area_m2', l.property_type === 'land' ? l.floor_area_m2 === null : isPositive(l.floor_area_m2)],
        ['plot_area_m2', l.plot_area_m2 === null ? l.property_type !== 'land' : isPositive(l.plot_area_m2)],
        ['land is for sale', l.property_type !== 'land' || l.listing_type === 'sale'],
      ];
      for (const [field, ok] of checks) if (!ok) problems.push(`${l.id} ${field}: ${JSON.stringify(l[field])}`);
    }
    expect(problems.slice(0, 20)).toEqual([]);
  });

  it('prices sales in the hundreds of thousands and rents per month, in local terms', () => {
    const median = (values: number[]): number => values.sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
    const apartments = (country: string, type: 'sale' | 'rent'): number =>
      median(listings.filter((l) => l.country === country && l.listing_type === type && l.property_type === 'apartment').map((l) => l.price));
    // Median apartment [sale low, sale high, rent low, rent high]; kronor and zloty are worth
    // roughly a tenth and a quarter of a euro, so their prices are that much higher.
    const bounds: Record<string, [number, number, number, number]> = { SEK: [1e6, 1e7, 5_000, 30_000], PLN: [3e5, 2e6, 1_500, 8_000] };
    const outside: string[] = [];
    for (const country of COUNTRIES) {
      const [saleLow, saleHigh, rentLow, rentHigh] = bounds[country.currency] ?? [1e5, 1e6, 300, 5_000];
      const sale = apartments(country.code, 'sale');
      const rent = apartments(country.code, 'rent');
      if (!(sale >= saleLow && sale <= saleHigh)) outside.push(`${country.code} sale ${sale}`);
      if (!(rent >= rentLow && rent <= rentHigh)) outside.push(`${country.code} rent ${rent}`);
    }
    expect(outside).toEqual([]);
  });
});
