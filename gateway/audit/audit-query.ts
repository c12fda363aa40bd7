import { invalidParameter } from '../http/invalid-parameter';
import { parseLimit } from '../http/list-query';
import { queryParams } from '../http/query-params';
import type { AuditQuery } from './audit-log';

const KEY_ID = /^[A-Za-z0-9._-]{1,64}$/;
const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;
const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/i;
export const DEFAULT_AUDIT_PAGE = 50;

/** `since`: an RFC 3339 date-time, or a date (midnight UTC). Returns ms. */
export function parseSince(value: string): number {
  const ms = DATE_ONLY.test(value) ? Date.parse(`${value}T00:00:00Z`) : DATE_TIME.test(value) ? Date.parse(value) : NaN;
  if (Number.isNaN(ms)) throw invalidParameter('since', 'must be a date (2026-11-24) or an RFC 3339 date-time (2026-11-24T09:30:00Z)');
  // The log's times are Redis stream ids: milliseconds since 1970, never negative.
  if (ms < 0) throw invalidParameter('since', 'must be 1970-01-01 or later');
  return ms;
}

/**
 * The audit log's query (`key_id`, `since`, `limit` 1..1000, `cursor`), from the admin API's
 * query string or the console's filter form. Unknown or repeated parameters are refused, as on
 * the public API; empty ones mean "no filter" (an empty form field).
 */
export function parseAuditQuery(params: URLSearchParams, allowed: readonly string[] = []): AuditQuery {
  queryParams(params.toString(), ['key_id', 'since', 'limit', 'cursor', ...allowed]);
  const get = (name: string): string | undefined => {
    const v = params.get(name);
    return v === null || v === '' ? undefined : v;
  };
  const query: AuditQuery = { limit: DEFAULT_AUDIT_PAGE };
  const keyId = get('key_id');
  if (keyId !== undefined) {
    if (!KEY_ID.test(keyId)) throw invalidParameter('key_id', 'must be 1 to 64 characters of A-Z a-z 0-9 . _ -');
    query.keyId = keyId;
  }
  const since = get('since');
  if (since !== undefined) query.sinceMs = parseSince(since);
  const limit = get('limit');
  if (limit !== undefined) query.limit = parseLimit(limit);
  const cursor = get('cursor');
  if (cursor !== undefined) query.cursor = cursor;
  return query;
}
