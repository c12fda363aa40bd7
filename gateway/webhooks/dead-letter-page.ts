import { invalidParameter } from '../http/invalid-parameter';
import { checkPageLimit } from '../http/list-query';
import type { DeadLetter } from './dead-letter';

/** Page size of the dead letters when no `limit` is given (docs/guarantees.md: lists take `limit` 1..1000). */
export const DEAD_PAGE_DEFAULT = 100;

export interface DeadLetterPage {
  events: DeadLetter[];
  next_cursor: string | null;
}

/** Where a dead letter sorts: oldest failure first, then by id (ids are unique). RFC 3339 UTC times sort as text. */
export const deadLetterSortKey = (failedAt: string, id: string): string => `${failedAt}\u0000${id}`;

/** The cursor after a letter: its sort key, base64url. */
export const deadLetterCursor = (d: Pick<DeadLetter, 'failed_at' | 'id'>): string => Buffer.from(deadLetterSortKey(d.failed_at, d.id), 'utf8').toString('base64url');

/** The sort key a cursor names; 400 `invalid_parameter` for anything this API did not give. */
export function decodeDeadLetterCursor(cursor: string): string {
  const after = Buffer.from(cursor, 'base64url').toString('utf8');
  if (!after.includes('\u0000') || Buffer.from(after, 'utf8').toString('base64url') !== cursor) {
    throw invalidParameter('cursor', 'not a cursor this API gave (pass next_cursor back unchanged)');
  }
  return after;
}

/** `limit` of a dead-letter page: the default, or 1..1000. */
export function deadLetterLimit(limit: number | undefined): number {
  const n = limit ?? DEAD_PAGE_DEFAULT;
  checkPageLimit(n);
  return n;
}

/**
 * One page of dead letters held in memory (the embedded queue's, at most a few thousand) after
 * `cursor`: `next_cursor` while more follow, else null. Letters re-sent or added between two pages
 * neither repeat nor shift the walk, since the cursor names a place in the order, not an index.
 * The Redis queue pages its sorted index instead (redis-dead-letters.ts), never reading them all.
 */
export function deadLetterPage(all: readonly DeadLetter[], options: { limit?: number; cursor?: string }): DeadLetterPage {
  const limit = deadLetterLimit(options.limit);
  const after = options.cursor === undefined ? undefined : decodeDeadLetterCursor(options.cursor);
  const key = (d: DeadLetter): string => deadLetterSortKey(d.failed_at, d.id);
  const sorted = [...all].sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
  const from = after === undefined ? 0 : sorted.findIndex((d) => key(d) > after);
  const events = from < 0 ? [] : sorted.slice(from, from + limit);
  const more = from >= 0 && from + limit < sorted.length;
  return { events, next_cursor: more ? deadLetterCursor(events[events.length - 1]!) : null };
}
