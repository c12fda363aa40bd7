// gateway/validation/: input checking shared by the layers above: the public query's parsing, the ISO country
// list, and stored JSON checked against its schema.
import { normaliseCountry } from './iso-countries';

/** A parsed query, or the parameter that made it invalid. */
export type QueryParse<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly parameter: string; readonly message: string };

export const LISTING_TYPES = ['sale', 'rent'] as const;
export const PROPERTY_TYPES = ['apartment', 'house', 'land', 'commercial'] as const;
export type ListingType = (typeof LISTING_TYPES)[number];
export type PropertyType = (typeof PROPERTY_TYPES)[number];

export interface ListQuery {
  readonly country: string;
  readonly listingType?: ListingType;
  readonly propertyType?: PropertyType;
  readonly limit: number;
  readonly cursor?: string;
}
export interface ItemQuery {
  readonly country: string;
}

export const DEFAULT_LIMIT = 20;
export const MAX_LIMIT = 100;
// Canonical decimal 1..100 only: "05", "5.0", " 5", "1e1", "0x10" are all refused.
const LIMIT_PATTERN = /^(?:[1-9][0-9]?|100)$/;
const LIST_PARAMETERS = new Set(['country', 'listing_type', 'property_type', 'limit', 'cursor']);
const ITEM_PARAMETERS = new Set(['country']);
const MAX_REPORTED_NAME = 128;

const fail = (parameter: string, message: string): QueryParse<never> => ({
  ok: false,
  parameter: parameter.length > MAX_REPORTED_NAME ? `${parameter.slice(0, MAX_REPORTED_NAME)}…` : parameter,
  message,
});

/**
 * Splits a raw query string into name → value, refusing unknown, repeated and empty parameters.
 * The raw string is parsed here (not by express) because a merged or array-valued parameter must be
 * refused, never silently reinterpreted. Names are compared exactly after percent-decoding.
 */
function splitQuery(rawQuery: string, allowed: ReadonlySet<string>): QueryParse<Map<string, string>> {
  const values = new Map<string, string>();
  if (rawQuery === '') return { ok: true, value: values };
  for (const [name, value] of new URLSearchParams(rawQuery)) {
    if (!allowed.has(name)) return fail(name, `Unknown parameter "${name.slice(0, MAX_REPORTED_NAME)}".`);
    if (values.has(name)) return fail(name, `Parameter "${name}" is given more than once.`);
    if (value === '') return fail(name, `Parameter "${name}" is empty.`);
    values.set(name, value);
  }
  return { ok: true, value: values };
}

function parseCountry(values: Map<string, string>): QueryParse<string> {
  const raw = values.get('country');
  if (raw === undefined) return fail('country', 'Parameter "country" is required.');
  const country = normaliseCountry(raw);
  return country ? { ok: true, value: country } : fail('country', 'Parameter "country" must be an ISO 3166-1 alpha-2 code.');
}

function oneOf<T extends string>(values: Map<string, string>, name: string, allowed: readonly T[]): QueryParse<T | undefined> {
  const raw = values.get(name);
  if (raw === undefined) return { ok: true, value: undefined };
  return (allowed as readonly string[]).includes(raw)
    ? { ok: true, value: raw as T }
    : fail(name, `Parameter "${name}" must be one of ${allowed.join(', ')}.`);
}

/** The query of `GET /v1/properties` (openapi/openapi.yaml). Pure. */
export function parseListQuery(rawQuery: string): QueryParse<ListQuery> {
  const split = splitQuery(rawQuery, LIST_PARAMETERS);
  if (!split.ok) return split;
  const values = split.value;
  const country = parseCountry(values);
  if (!country.ok) return country;
  const listingType = oneOf(values, 'listing_type', LISTING_TYPES);
  if (!listingType.ok) return listingType;
  const propertyType = oneOf(values, 'property_type', PROPERTY_TYPES);
  if (!propertyType.ok) return propertyType;
  const rawLimit = values.get('limit');
  if (rawLimit !== undefined && !LIMIT_PATTERN.test(rawLimit)) {
    return fail('limit', `Parameter "limit" must be an integer from 1 to ${MAX_LIMIT}.`);
  }
  const cursor = values.get('cursor');
  return {
    ok: true,
    value: {
      country: country.value,
      ...(listingType.value ? { listingType: listingType.value } : {}),
      ...(propertyType.value ? { propertyType: propertyType.value } : {}),
      limit: rawLimit === undefined ? DEFAULT_LIMIT : Number(rawLimit),
      ...(cursor !== undefined ? { cursor } : {}),
    },
  };
}

/** The query of `GET /v1/properties/{id}`: `country` and nothing else. Pure. */
export function parseItemQuery(rawQuery: string): QueryParse<ItemQuery> {
  const split = splitQuery(rawQuery, ITEM_PARAMETERS);
  if (!split.ok) return split;
  const country = parseCountry(split.value);
  return country.ok ? { ok: true, value: { country: country.value } } : country;
}

/** The query of an endpoint that takes no parameters (`/v1/ping`): any parameter is unknown. Pure. */
export function parseEmptyQuery(rawQuery: string): QueryParse<Record<string, never>> {
  const split = splitQuery(rawQuery, NO_PARAMETERS);
  return split.ok ? { ok: true, value: {} } : split;
}
const NO_PARAMETERS: ReadonlySet<string> = new Set();

/** `{id}` of `/v1/properties/{id}` after percent-decoding: 1..128 of `A-Z a-z 0-9 . _ ~ -`, not `.` or `..`. */
const LISTING_ID = /^[A-Za-z0-9._~-]{1,128}$/;
export const isListingId = (id: string): boolean => LISTING_ID.test(id) && id !== '.' && id !== '..';
