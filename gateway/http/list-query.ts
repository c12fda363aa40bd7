import { invalidParameter } from './invalid-parameter';
import { PAGE } from './page-bound';
import { queryParams, rawQueryOf } from './query-params';

const outOfBound = (): Error => invalidParameter('limit', `must be a whole number from ${PAGE.min} to ${PAGE.max}`);

/** `limit` as a whole number within the page bound; else 400 `invalid_parameter` naming `limit`. */
export function parseLimit(value: string): number {
  const n = /^[0-9]{1,4}$/.test(value) ? Number(value) : NaN;
  if (!(n >= PAGE.min && n <= PAGE.max)) throw outOfBound();
  return n;
}

/** A page size given in code (a store's caller, the CLI): within the page bound, else the same 400. */
export function checkPageLimit(limit: number): void {
  if (!Number.isInteger(limit) || limit < PAGE.min || limit > PAGE.max) throw outOfBound();
}

/** A cursor as given: a non-empty string (its meaning is the list's to check). */
export function parseCursor(value: string): string {
  if (value === '') throw invalidParameter('cursor', 'empty (leave it out for the first page)');
  return value;
}

export interface ListQuery {
  limit?: number;
  cursor?: string;
}

/**
 * The query of a list call: `limit` (1..1000) and `cursor`, each at most once; anything else is
 * 400 `invalid_parameter` naming it, as on the public surface.
 */
export function listQuery(url: string): ListQuery {
  const { limit, cursor } = queryParams(rawQueryOf(url), ['limit', 'cursor']);
  return {
    ...(limit !== undefined ? { limit: parseLimit(limit) } : {}),
    ...(cursor !== undefined ? { cursor: parseCursor(cursor) } : {}),
  };
}
