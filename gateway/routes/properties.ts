import type { RequestHandler, Response } from 'express';
import type { CursorCodec } from '../cursor/cursor-codec';
import { sendJson } from '../send';
import type { CallContext, ListingsClient } from '../upstream/listings-client';
import { errorForUpstream } from '../upstream/outcome';

/** The upstream call's context: the request id, and a signal that fires if the caller goes away. */
function callContext(res: Response): CallContext {
  const controller = new AbortController();
  res.once('close', () => {
    if (!res.writableFinished) controller.abort();
  });
  return { requestId: res.locals.requestId, signal: controller.signal };
}

/** `GET /v1/properties`: one page from the data service, with a new cursor bound to key and filters. */
export function listProperties(listings: ListingsClient, cursors: CursorCodec): RequestHandler {
  return async function answerPropertiesPage(_req, res) {
    const query = res.locals.listQuery!;
    const filters = res.locals.cursorFilters!;
    const page = await listings.listPage(
      { ...filters, limit: query.limit, ...(res.locals.cursorPosition !== undefined ? { after: res.locals.cursorPosition } : {}) },
      callContext(res),
    );
    if (page.kind !== 'page') throw errorForUpstream(page);
    const nextCursor = page.nextAfter === null ? null : await cursors.issue(res.locals.key!.id, filters, page.nextAfter);
    sendJson(res, 200, { data: page.items, next_cursor: nextCursor });
  };
}

/** `GET /v1/properties/{id}?country=CC`: one published listing, or 404 `not_found`. */
export function getProperty(listings: ListingsClient): RequestHandler {
  return async function answerProperty(req, res) {
    const result = await listings.getListing(res.locals.itemQuery!.country, req.params.id as string, callContext(res));
    if (result.kind !== 'item') throw errorForUpstream(result);
    sendJson(res, 200, { data: result.item });
  };
}
