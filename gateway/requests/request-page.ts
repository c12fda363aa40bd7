import { decodeIdCursor, encodeIdCursor } from '../http/id-cursor';
import { REQUEST_ID } from './subscription-request';

/** Requests are listed newest first; the cursor carries the last id shown (opaque: base64url). */
export const encodeRequestCursor = (lastId: string): string => encodeIdCursor('r1', lastId);

export const decodeRequestCursor = (cursor: string): string => decodeIdCursor('r1', cursor, REQUEST_ID);
