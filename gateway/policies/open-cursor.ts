import type { RequestHandler } from 'express';
import type { CursorCodec } from '../cursor/cursor-codec';
import { ApiError } from '../errors';

/**
 * Decides the filters a cursor must match and, when the caller sent one, decrypts it:
 * 400 `invalid_cursor` if it is malformed, expired, or was issued to another key or for other filters.
 */
export function openCursor(cursors: CursorCodec): RequestHandler {
  return async function openPageCursor(_req, res, next) {
    const query = res.locals.listQuery!;
    const filters = {
      country: query.country,
      ...(query.listingType ? { listingType: query.listingType } : {}),
      ...(query.propertyType ? { propertyType: query.propertyType } : {}),
    };
    res.locals.cursorFilters = filters;
    if (query.cursor !== undefined) {
      const check = await cursors.open(query.cursor, res.locals.key!.id, filters);
      if (check.kind === 'invalid') throw new ApiError('invalid_cursor');
      res.locals.cursorPosition = check.position;
    }
    next();
  };
}
