import { ApiError } from '../errors';
import { checkPageLimit } from '../accounts/account-page';
import { REQUEST_ID } from './subscription-request';

export { checkPageLimit };

/** Requests are listed newest first; the cursor carries the last id shown (opaque: base64url). */
export const encodeRequestCursor = (lastId: string): string => Buffer.from(`r1:${lastId}`, 'utf8').toString('base64url');

export function decodeRequestCursor(cursor: string): string {
  const text = /^[A-Za-z0-9_-]{1,200}$/.test(cursor) ? Buffer.from(cursor, 'base64url').toString('utf8') : '';
  const id = text.startsWith('r1:') ? text.slice(3) : '';
  if (!REQUEST_ID.test(id)) throw new ApiError('invalid_parameter', { parameter: 'cursor' }, undefined, 'cursor: not a cursor this API gave (pass next_cursor back unchanged)');
  return id;
}
