import { invalidParameter } from './invalid-parameter';

/** An admin list's cursor: the last id shown behind a version prefix, base64url (opaque to the caller). */
export const encodeIdCursor = (prefix: string, lastId: string): string => Buffer.from(`${prefix}:${lastId}`, 'utf8').toString('base64url');

/** The id a cursor carries; 400 `invalid_parameter` naming `cursor` unless this API gave it (its prefix, an id of `idShape`). */
export function decodeIdCursor(prefix: string, cursor: string, idShape: RegExp): string {
  const text = /^[A-Za-z0-9_-]{1,200}$/.test(cursor) ? Buffer.from(cursor, 'base64url').toString('utf8') : '';
  const id = text.startsWith(`${prefix}:`) ? text.slice(prefix.length + 1) : '';
  if (!idShape.test(id)) throw invalidParameter('cursor', 'not a cursor this API gave (pass next_cursor back unchanged)');
  return id;
}
