/**
 * The in-memory index behind the internal API. Pages use keyset pagination: a page starts after a
 * position (the id of the previous page's last item), found by binary search in a precomputed
 * id-sorted array for the exact filter combination. Page N therefore costs the same as page 1,
 * O(log n + limit), which is what makes this service a fair baseline for deep-paging benchmarks.
 */
import { Listing, ListingRecord, ListingType, PropertyType, StoredListing, toFlatListing } from './listing';

export interface ListingFilter {
  country: string;
  listingType?: ListingType;
  propertyType?: PropertyType;
}

export interface ListingPage {
  items: ListingRecord[];
  /** The id of the last item when more items follow, else null. */
  nextAfter: string | null;
}

/**
 * One country's published listings, sorted by id, once for every filter combination. Nested
 * records rather than composite string keys: no key strings are built per listing or per request.
 */
interface CountryIndex {
  all: ListingRecord[];
  byListingType: Record<ListingType, ListingRecord[]>;
  byPropertyType: Record<PropertyType, ListingRecord[]>;
  byBoth: Record<ListingType, Record<PropertyType, ListingRecord[]>>;
}

function emptyByPropertyType(): Record<PropertyType, ListingRecord[]> {
  return { apartment: [], house: [], land: [], commercial: [] };
}

/** Plain code-unit order, the same order `after` positions are compared in. */
function byId(a: ListingRecord, b: ListingRecord): number {
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

/** Sorts once; every narrower filter is a stable partition of that order, so it needs no sorting. */
function indexCountry(published: ListingRecord[]): CountryIndex {
  const all = published.sort(byId);
  const index: CountryIndex = {
    all,
    byListingType: { sale: [], rent: [] },
    byPropertyType: emptyByPropertyType(),
    byBoth: { sale: emptyByPropertyType(), rent: emptyByPropertyType() },
  };
  for (const listing of all) {
    index.byListingType[listing.listing_type].push(listing);
    index.byPropertyType[listing.property_type].push(listing);
    index.byBoth[listing.listing_type][listing.property_type].push(listing);
  }
  return index;
}

function select(index: CountryIndex, filter: ListingFilter): readonly ListingRecord[] {
  const { listingType, propertyType } = filter;
  if (listingType === undefined) return propertyType === undefined ? index.all : index.byPropertyType[propertyType];
  return propertyType === undefined ? index.byListingType[listingType] : index.byBoth[listingType][propertyType];
}

/** Index of the first element whose id is greater than `after` (its length when there is none). */
export function firstAfter(sorted: readonly ListingRecord[], after: string): number {
  let low = 0;
  let high = sorted.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if (sorted[mid]!.id <= after) low = mid + 1;
    else high = mid;
  }
  return low;
}

const EMPTY: readonly ListingRecord[] = [];

export class ListingIndex {
  /** country -> id -> listing, withdrawn ones included, for single lookups. */
  private readonly byCountryAndId = new Map<string, Map<string, StoredListing>>();
  private readonly pagesByCountry = new Map<string, CountryIndex>();
  private total = 0;
  private publishedTotal = 0;

  /**
   * Holds the given listings as they are (records are shared, never copied). Throws on a duplicate
   * (country, id): the loaders report those with context before getting here.
   */
  constructor(listings: Iterable<StoredListing>) {
    const publishedByCountry = new Map<string, ListingRecord[]>();
    for (const listing of listings) {
      const { country, id } = listing.record;
      let ids = this.byCountryAndId.get(country);
      let published = publishedByCountry.get(country);
      if (ids === undefined || published === undefined) {
        this.byCountryAndId.set(country, (ids = new Map()));
        publishedByCountry.set(country, (published = []));
      }
      if (ids.has(id)) throw new Error(`duplicate listing ${country} ${id}`);
      ids.set(id, listing);
      this.total += 1;
      if (!listing.withdrawn) published.push(listing.record);
    }
    for (const [country, published] of publishedByCountry) {
      this.pagesByCountry.set(country, indexCountry(published));
      this.publishedTotal += published.length;
    }
  }

  /** Every stored listing, withdrawn ones included. */
  get size(): number {
    return this.total;
  }

  /** Listings that appear in pages. */
  get publishedCount(): number {
    return this.publishedTotal;
  }

  /**
   * Up to `limit` published records matching the filter, in id order, starting after position
   * `after` (from the start when undefined). A position need not be an existing id.
   */
  page(filter: ListingFilter, after: string | undefined, limit: number): ListingPage {
    const country = this.pagesByCountry.get(filter.country);
    const sorted = country === undefined ? EMPTY : select(country, filter);
    const start = after === undefined ? 0 : firstAfter(sorted, after);
    const end = Math.min(start + limit, sorted.length);
    const items = sorted.slice(start, end);
    const last = items[items.length - 1];
    return { items, nextAfter: end < sorted.length && last !== undefined ? last.id : null };
  }

  /** The listing with this (country, id), withdrawn or not, as a fresh flat object carrying its `withdrawn` flag. */
  get(country: string, id: string): Listing | undefined {
    const stored = this.byCountryAndId.get(country)?.get(id);
    return stored === undefined ? undefined : toFlatListing(stored);
  }
}
