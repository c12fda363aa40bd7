// gateway/audit/: the audit log: who changed what, as entries with their actor and changes; the Redis stream
// and its memory twin, appends, the log's query and the one-line text format.
import { invalidParameter } from '../http/invalid-parameter';
import type { AuditEntry } from './audit-entry';

export interface AuditQuery {
  keyId?: string;
  /** Only entries at or after this time (ms). */
  sinceMs?: number;
  /** 1..1000. */
  limit: number;
  /** `next_cursor` of the previous page. */
  cursor?: string;
}

/** Newest first. `next_cursor` is null when nothing older matches (or may match). */
export interface AuditPage {
  entries: AuditEntry[];
  next_cursor: string | null;
}

/** Reading the audit log; each store writes its own way (Redis: inside the change's transaction). */
export interface AuditLog {
  read(query: AuditQuery): Promise<AuditPage>;
}

/** Cursors carry the id of the last entry shown; opaque to callers (base64url). */
export const encodeCursor = (lastId: string): string => Buffer.from(`a1:${lastId}`, 'utf8').toString('base64url');

export function decodeCursor(cursor: string, idPattern: RegExp): string {
  const text = /^[A-Za-z0-9_-]{1,200}$/.test(cursor) ? Buffer.from(cursor, 'base64url').toString('utf8') : '';
  const id = text.startsWith('a1:') ? text.slice(3) : '';
  if (!idPattern.test(id)) throw invalidParameter('cursor', 'not a cursor this endpoint gave out.');
  return id;
}
