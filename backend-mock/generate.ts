/**
 * The deterministic listing generator used when no LISTINGS_FILE is given. Every value comes from
 * one seeded random source and a fixed epoch (never the clock), so the same count and seed give the
 * byte-identical data set on every run and every machine: benchmarks and tests can rely on it.
 */
import { COUNTRIES, Country, Locality } from './geography';
import { ListingRecord, ListingType, PropertyType, StoredListing } from './listing';
import { SeededRandom, WeightedChoice } from './seeded-random';

/** The record of a generated listing, every field typed. */
export interface GeneratedRecord extends ListingRecord {
  title: string;
  price: number;
  currency: string;
  locality: string;
  region: string;
  postal_code: string;
  bedrooms: number | null;
  bathrooms: number | null;
  floor_area_m2: number | null;
  plot_area_m2: number | null;
  latitude: number;
  longitude: number;
  /** ISO 8601 UTC, within the two years before EPOCH. */
  published_at: string;
}

export const DEFAULT_SEED = 20260101;
export const DEFAULT_LISTINGS_COUNT = 120000;
/** Publication dates count back from here rather than from "now", which would change every run. */
export const EPOCH = Date.UTC(2026, 0, 1);
/** Two years of publication dates. */
const PUBLICATION_DAYS = 730;
const WITHDRAWN_SHARE = 0.05;

/** Crockford base32 (no I, L, O, U): ids stay readable and cannot be mistaken for one another. */
const ID_ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
/** Letters for postal codes; I and O are left out as most postal systems avoid them (1/0 look-alikes). */
const LETTERS = 'ABCDEFGHJKLMNPQRSTUVWXYZ';

const PROPERTY_SHARES: readonly { type: PropertyType; weight: number }[] = [
  { type: 'apartment', weight: 50 },
  { type: 'house', weight: 30 },
  { type: 'land', weight: 7 },
  { type: 'commercial', weight: 13 },
];

const APARTMENT_BEDROOMS: readonly { bedrooms: number; weight: number }[] = [
  { bedrooms: 0, weight: 8 },
  { bedrooms: 1, weight: 30 },
  { bedrooms: 2, weight: 35 },
  { bedrooms: 3, weight: 20 },
  { bedrooms: 4, weight: 7 },
];

const ADJECTIVES: Readonly<Record<PropertyType, readonly string[]>> = {
  apartment: ['Bright', 'Spacious', 'Renovated', 'Modern', 'Charming', 'Quiet', 'Well-located', 'Newly built'],
  house: ['Detached', 'Semi-detached', 'Family', 'Renovated', 'Charming', 'Spacious', 'Modern', 'Period'],
  land: ['Level', 'Serviced', 'Large', 'Sunny', 'Residential'],
  commercial: ['Prime', 'Modern', 'Flexible', 'Ground-floor', 'Refurbished'],
};
const COMMERCIAL_KINDS = ['office space', 'retail unit', 'commercial premises', 'warehouse'] as const;
/** "3-bedroom house" and the like, built once instead of per listing. */
const BEDROOM_KINDS = {
  apartment: Array.from({ length: 7 }, (_, n) => `${n}-bedroom apartment`),
  house: Array.from({ length: 7 }, (_, n) => `${n}-bedroom house`),
};

/**
 * Joins parts into one flat string. Chained `+` or template literals build a rope (one V8
 * ConsString per join), and several ropes per listing for 120,000 listings made start-up mostly
 * garbage collection; a join allocates the final string once.
 */
function flat(parts: string[]): string {
  return parts.join('');
}

interface Dimensions {
  bedrooms: number | null;
  bathrooms: number | null;
  floorArea: number | null;
  plotArea: number | null;
}

function dimensionsOf(type: PropertyType, random: SeededRandom, apartmentBedrooms: WeightedChoice<{ bedrooms: number }>): Dimensions {
  switch (type) {
    case 'apartment': {
      const bedrooms = apartmentBedrooms.draw(random).bedrooms;
      return {
        bedrooms,
        bathrooms: bedrooms <= 1 ? 1 : random.int(1, 2),
        floorArea: Math.round(28 + bedrooms * 22 + random.between(0, 20)),
        plotArea: null,
      };
    }
    case 'house': {
      const bedrooms = random.int(2, 6);
      return {
        bedrooms,
        bathrooms: random.int(1, Math.min(4, bedrooms - 1)),
        floorArea: Math.round(60 + bedrooms * 25 + random.between(0, 60)),
        plotArea: Math.round(random.between(120, 1500)),
      };
    }
    case 'land':
      return { bedrooms: null, bathrooms: null, floorArea: null, plotArea: Math.round(random.between(400, 15000)) };
    case 'commercial':
      return {
        bedrooms: null,
        bathrooms: random.int(1, 4),
        floorArea: Math.round(random.between(40, 1200)),
        plotArea: random.chance(0.3) ? Math.round(random.between(200, 3000)) : null,
      };
  }
}

/** Price per m² of floor relative to an apartment's (houses sit further out, where space is cheaper). */
const FLOOR_FACTOR: Readonly<Record<Exclude<PropertyType, 'land'>, number>> = { apartment: 1, house: 0.7, commercial: 0.85 };
/** A plot's price per m² as a share of the built price per m²: land is cheap next to floor space. */
const PLOT_SHARE = { land: 0.01, garden: 0.005 } as const;

/**
 * Asking price in the local currency, from the country's price level per m² (sale) or monthly rent
 * per m² (rent): sale prices come out in the hundreds of thousands in GBP/EUR/PLN and in millions of
 * SEK, as on real portals. Buildings are priced by floor area plus a little for any plot; land by plot.
 */
function priceOf(country: Country, locality: Locality, listingType: ListingType, type: PropertyType, d: Dimensions, random: SeededRandom): number {
  const perM2 = (listingType === 'sale' ? country.salePerM2 : country.rentPerM2) * locality.priceFactor * random.between(0.8, 1.25);
  const plot = d.plotArea ?? 0;
  const value = type === 'land'
    ? plot * perM2 * PLOT_SHARE.land
    : (d.floorArea ?? 0) * perM2 * FLOOR_FACTOR[type] + plot * perM2 * PLOT_SHARE.garden;
  // Rounded the way agents quote: sales to the thousand, rents to ten.
  return listingType === 'sale' ? Math.round(value / 1000) * 1000 : Math.max(50, Math.round(value / 10) * 10);
}

function titleOf(type: PropertyType, listingType: ListingType, bedrooms: number | null, locality: string, random: SeededRandom): string {
  const adjective = random.pick(ADJECTIVES[type]);
  let kind: string;
  if (type === 'land') kind = 'building plot';
  else if (type === 'commercial') kind = random.pick(COMMERCIAL_KINDS);
  else if (bedrooms === 0) kind = 'studio apartment';
  else kind = BEDROOM_KINDS[type][bedrooms ?? 0]!;
  return flat([adjective, ' ', kind, listingType === 'sale' ? ' for sale in ' : ' to rent in ', locality]);
}

/** Fills a postal-code shape: `#` becomes a digit, `@` a letter. */
function postalCodeOf(locality: Locality, random: SeededRandom): string {
  const shape = random.pick(locality.postalCodes);
  let code = '';
  for (const ch of shape) {
    if (ch === '#') code += String(random.int(0, 9));
    else if (ch === '@') code += LETTERS[random.int(0, LETTERS.length - 1)]!;
    else code += ch;
  }
  return code;
}

function roundTo6(value: number): number {
  return Math.round(value * 1e6) / 1e6;
}

/**
 * A 4-round Feistel network over 40 bits: a bijection, so distinct sequence numbers give distinct
 * values (unique ids by construction, with no set of taken ids and no redraws), while consecutive
 * numbers land far apart (ids look random and their order is unrelated to generation order).
 */
function scramble40(n: number, keys: readonly number[]): [number, number] {
  let left = Math.floor(n / 0x100000) & 0xfffff;
  let right = n & 0xfffff;
  for (const key of keys) {
    let f = Math.imul(right ^ key, 0x9e3779b1);
    f ^= f >>> 15;
    f = Math.imul(f, 0x85ebca6b);
    const next = (left ^ (f >>> 12)) & 0xfffff;
    left = right;
    right = next;
  }
  return [left, right];
}

/** `CC-` plus 8 base32 characters encoding the scrambled sequence number (20 bits per half). */
function idOf(country: string, sequence: number, keys: readonly number[]): string {
  const [high, low] = scramble40(sequence, keys);
  const a = ID_ALPHABET;
  return String.fromCharCode(
    country.charCodeAt(0), country.charCodeAt(1), 0x2d,
    a.charCodeAt((high >>> 15) & 31), a.charCodeAt((high >>> 10) & 31), a.charCodeAt((high >>> 5) & 31), a.charCodeAt(high & 31),
    a.charCodeAt((low >>> 15) & 31), a.charCodeAt((low >>> 10) & 31), a.charCodeAt((low >>> 5) & 31), a.charCodeAt(low & 31),
  );
}

const DAY_MS = 24 * 60 * 60 * 1000;
/** "YYYY-MM-DDT" for each day counting back from EPOCH (Date formatting per listing is slow). */
const DAY_PREFIXES = Array.from({ length: PUBLICATION_DAYS }, (_, d) => new Date(EPOCH - (d + 1) * DAY_MS).toISOString().slice(0, 11));
const TWO_DIGITS = Array.from({ length: 60 }, (_, n) => String(n).padStart(2, '0'));

/** An ISO 8601 UTC second within the PUBLICATION_DAYS before EPOCH. */
function publishedAtOf(random: SeededRandom): string {
  return flat([random.pick(DAY_PREFIXES), TWO_DIGITS[random.int(0, 23)]!, ':', TWO_DIGITS[random.int(0, 59)]!, ':', TWO_DIGITS[random.int(0, 59)]!, 'Z']);
}

/** Generates `count` listings over the twelve countries; the same (count, seed) always gives the same array. */
export function generateListings(count: number, seed: number = DEFAULT_SEED): StoredListing<GeneratedRecord>[] {
  const random = new SeededRandom(seed);
  const countries = new WeightedChoice(COUNTRIES, (c) => c.weight);
  const localities = new Map(COUNTRIES.map((c) => [c.code, new WeightedChoice(c.localities, (l) => l.weight)]));
  const propertyTypes = new WeightedChoice(PROPERTY_SHARES, (p) => p.weight);
  const apartmentBedrooms = new WeightedChoice(APARTMENT_BEDROOMS, (b) => b.weight);
  // Derived from the seed so another seed also reshuffles the ids.
  const idKeys = [random.int(0, 0xfffff), random.int(0, 0xfffff), random.int(0, 0xfffff), random.int(0, 0xfffff)];
  const listings = new Array<StoredListing<GeneratedRecord>>(count);

  for (let i = 0; i < count; i += 1) {
    const country = countries.draw(random);
    const locality = localities.get(country.code)!.draw(random);
    const propertyType = propertyTypes.draw(random).type;
    // Plots are practically never offered for rent; commercial space is let about as often as sold.
    const rentShare = propertyType === 'land' ? 0 : propertyType === 'commercial' ? 0.5 : 0.4;
    const listingType: ListingType = random.chance(rentShare) ? 'rent' : 'sale';
    const dims = dimensionsOf(propertyType, random, apartmentBedrooms);
    // Scatter within roughly 8 km of the centre so points fall in and around the town.
    const latitude = roundTo6(locality.latitude + random.between(-0.07, 0.07));
    const longitude = roundTo6(locality.longitude + random.between(-0.1, 0.1));

    const record: GeneratedRecord = {
      id: idOf(country.code, i, idKeys),
      country: country.code,
      listing_type: listingType,
      property_type: propertyType,
      title: titleOf(propertyType, listingType, dims.bedrooms, locality.name, random),
      price: priceOf(country, locality, listingType, propertyType, dims, random),
      currency: country.currency,
      locality: locality.name,
      region: locality.region,
      postal_code: postalCodeOf(locality, random),
      bedrooms: dims.bedrooms,
      bathrooms: dims.bathrooms,
      floor_area_m2: dims.floorArea,
      plot_area_m2: dims.plotArea,
      latitude,
      longitude,
      published_at: publishedAtOf(random),
    };
    listings[i] = { record, withdrawn: random.chance(WITHDRAWN_SHARE) };
  }
  return listings;
}
