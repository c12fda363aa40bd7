/**
 * The listing the data service stores, and the validation every record from a
 * LISTINGS_FILE goes through. Only the fields the service itself relies on (identity, the two
 * filter enums, the withdrawn flag) are checked; every other field is carried through untouched,
 * because the data service must not decide what a listing looks like beyond what it indexes.
 */

export const LISTING_TYPES = ['sale', 'rent'] as const;
export const PROPERTY_TYPES = ['apartment', 'house', 'land', 'commercial'] as const;

export type ListingType = (typeof LISTING_TYPES)[number];
export type PropertyType = (typeof PROPERTY_TYPES)[number];

/** A listing's fields as shown to callers: everything except the internal `withdrawn` flag. */
export interface ListingRecord {
  id: string;
  /** Upper-case ISO 3166-1 alpha-2. */
  country: string;
  listing_type: ListingType;
  property_type: PropertyType;
  [field: string]: unknown;
}

/**
 * A listing as the service holds it: the record plus the internal flag, kept side by side rather
 * than merged. Pages show records as they are, so no record is ever copied just to hide the flag
 * (at 120,000 listings that copy cost about a third of start-up).
 */
export interface StoredListing<R extends ListingRecord = ListingRecord> {
  record: R;
  /** Withdrawn listings stay available to single lookups but never appear in pages. */
  withdrawn: boolean;
}

/** The flat form of files and single lookups: the record with `withdrawn` as one more field. */
export type Listing = ListingRecord & { withdrawn: boolean };

/**
 * Ids travel in URL paths and as pagination positions, so they are limited to the RFC 3986
 * "unreserved" characters: they never need escaping and compare predictably as code units.
 */
const ID_PATTERN = /^[A-Za-z0-9._~-]{1,128}$/;
const COUNTRY_PATTERN = /^[A-Za-z]{2}$/;

/** True for an id a record may carry ("." and ".." are excluded: they are path segments with meaning). */
export function isValidId(id: string): boolean {
  return ID_PATTERN.test(id) && id !== '.' && id !== '..';
}

/** A record that cannot be stored; `field` names the offending field when there is one. */
export class RecordError extends Error {
  constructor(
    readonly field: string | null,
    readonly reason: string,
  ) {
    super(field === null ? reason : `field "${field}": ${reason}`);
    this.name = 'RecordError';
  }
}

function isEnumMember<T extends string>(values: readonly T[], value: unknown): value is T {
  return typeof value === 'string' && (values as readonly string[]).includes(value);
}

function requireEnum(record: Record<string, unknown>, field: string, values: readonly string[]): void {
  const value = record[field];
  if (isEnumMember(values, value)) return;
  const expected = `must be one of ${values.join(', ')}`;
  throw new RecordError(field, value === undefined ? `is required and ${expected}` : expected);
}

/**
 * Checks one raw record and splits it into record and flag: country upper-cased, `withdrawn`
 * defaulting to false, every other field kept as given and in its original order. Throws RecordError.
 */
export function toStoredListing(raw: unknown): StoredListing {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    throw new RecordError(null, 'must be a JSON object');
  }
  const { withdrawn = false, ...fields } = raw as Record<string, unknown>;

  const id = fields.id;
  if (id === undefined) throw new RecordError('id', 'is required');
  if (typeof id !== 'string') throw new RecordError('id', 'must be a string');
  if (!isValidId(id)) {
    throw new RecordError('id', 'must be 1 to 128 characters from A-Z a-z 0-9 . _ ~ - and not "." or ".."');
  }

  const country = fields.country;
  if (country === undefined) throw new RecordError('country', 'is required');
  if (typeof country !== 'string' || !COUNTRY_PATTERN.test(country)) {
    throw new RecordError('country', 'must be a two-letter country code');
  }
  // `fields` is a fresh copy, so normalising in place keeps the key order and touches no input.
  fields.country = country.toUpperCase();

  requireEnum(fields, 'listing_type', LISTING_TYPES);
  requireEnum(fields, 'property_type', PROPERTY_TYPES);
  if (typeof withdrawn !== 'boolean') throw new RecordError('withdrawn', 'must be a boolean');

  return { record: fields as ListingRecord, withdrawn };
}

/** The flat form of a stored listing, as a single lookup answers it. */
export function toFlatListing({ record, withdrawn }: StoredListing): Listing {
  return { ...record, withdrawn };
}
