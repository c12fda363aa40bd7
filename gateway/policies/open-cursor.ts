import type { CursorCodec } from '../cursor/cursor-codec';
import { ApiError } from '../errors';
import type { Keyed, Step, WithCursor, WithListQuery } from '../pipeline';

/**
 * Decides the filters a cursor must match and, when the caller sent one, decrypts it:
 * 400 `invalid_cursor` if it is malformed, expired, or was issued to another key or for other filters.
 */
export function openCursor(cursors: CursorCodec): Step<Keyed & WithListQuery, WithCursor> {
  return function openPageCursor(ctx) {
    const query = ctx.listQuery;
    const filters = {
      country: query.country,
      ...(query.listingType ? { listingType: query.listingType } : {}),
      ...(query.propertyType ? { propertyType: query.propertyType } : {}),
    };
    ctx.cursorFilters = filters;
    if (query.cursor === undefined) return;
    const check = cursors.open(query.cursor, ctx.key.id, filters);
    if (check.kind === 'invalid') throw new ApiError('invalid_cursor').because(`cursor_${check.reason}`);
    ctx.cursorPosition = check.position;
  };
}
