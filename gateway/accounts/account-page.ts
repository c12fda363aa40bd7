import { decodeIdCursor, encodeIdCursor } from '../http/id-cursor';
import { invalidParameter } from '../http/invalid-parameter';
import { ACCOUNT_ID } from './account';

/** Page size bounds of account lists (as every admin list: CONTRACT part 7). */
export const ACCOUNT_PAGE = { default: 100, min: 1, max: 1000 } as const;

export function checkPageLimit(limit: number): void {
  if (!Number.isInteger(limit) || limit < ACCOUNT_PAGE.min || limit > ACCOUNT_PAGE.max) {
    throw invalidParameter('limit', `must be a whole number from ${ACCOUNT_PAGE.min} to ${ACCOUNT_PAGE.max}`);
  }
}

/** Account lists are ordered by id; the cursor carries the last id shown (opaque: base64url). */
export const encodeAccountCursor = (lastId: string): string => encodeIdCursor('c1', lastId);

export const decodeAccountCursor = (cursor: string): string => decodeIdCursor('c1', cursor, ACCOUNT_ID);
