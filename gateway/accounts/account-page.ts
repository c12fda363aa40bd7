import { decodeIdCursor, encodeIdCursor } from '../http/id-cursor';
import { ACCOUNT_ID } from './account';

/** Account lists are ordered by id; the cursor carries the last id shown (opaque: base64url). */
export const encodeAccountCursor = (lastId: string): string => encodeIdCursor('c1', lastId);

export const decodeAccountCursor = (cursor: string): string => decodeIdCursor('c1', cursor, ACCOUNT_ID);
