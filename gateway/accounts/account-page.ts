import { ApiError } from '../errors';
import { ACCOUNT_ID } from './account';

/** Page size bounds of account lists (as every admin list: CONTRACT part 7). */
export const ACCOUNT_PAGE = { default: 100, min: 1, max: 1000 } as const;

export function checkPageLimit(limit: number): void {
  if (!Number.isInteger(limit) || limit < ACCOUNT_PAGE.min || limit > ACCOUNT_PAGE.max) {
    throw new ApiError('invalid_parameter', { parameter: 'limit' }, undefined, `limit: must be a whole number from ${ACCOUNT_PAGE.min} to ${ACCOUNT_PAGE.max}`);
  }
}

/** Account lists are ordered by id; the cursor carries the last id shown (opaque: base64url). */
export const encodeAccountCursor = (lastId: string): string => Buffer.from(`c1:${lastId}`, 'utf8').toString('base64url');

export function decodeAccountCursor(cursor: string): string {
  const text = /^[A-Za-z0-9_-]{1,200}$/.test(cursor) ? Buffer.from(cursor, 'base64url').toString('utf8') : '';
  const id = text.startsWith('c1:') ? text.slice(3) : '';
  if (!ACCOUNT_ID.test(id)) throw new ApiError('invalid_parameter', { parameter: 'cursor' }, undefined, 'cursor: not a cursor this API gave (pass next_cursor back unchanged)');
  return id;
}
