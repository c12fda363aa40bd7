import type { RequestHandler } from 'express';
import { ApiError } from '../errors';
import { callContext } from './call-context';
import type { CursorCodec } from '../cursor/cursor-codec';
import { sendJson } from '../send';
import type { ListingStores } from '../upstream/listing-stores';
import type { ListingsClient } from '../upstream/listings-client';
import { errorForUpstream } from '../upstream/outcome';

/** Seconds a caller is told to wait when its country's store is not configured. */
const STORE_RETRY_AFTER_SECONDS = 3600;

/** The store serving `country`; 503 `not_configured` when no store is configured for it. */
function storeFor(stores: ListingStores, country: string): ListingsClient {
  const store = stores.forCountry(country);
  if (!store) throw new ApiError('not_configured', {}, STORE_RETRY_AFTER_SECONDS, `No listing store is configured for ${country} yet.`);
  return store;
}

/** `GET /v1/properties`: one page from the data service, with a new cursor bound to key and filters. */
export function listProperties(stores: ListingStores, cursors: CursorCodec): RequestHandler {
  return async function answerPropertiesPage(_req, res) {
    const query = res.locals.listQuery!;
    const filters = res.locals.cursorFilters!;
    const page = await storeFor(stores, query.country).listPage(
      { ...filters, limit: query.limit, ...(res.locals.cursorPosition !== undefined ? { after: res.locals.cursorPosition } : {}) },
      callContext(res),
    );
    if (page.kind !== 'page') throw errorForUpstream(page);
    const nextCursor = page.nextAfter === null ? null : await cursors.issue(res.locals.key!.id, filters, page.nextAfter);
    sendJson(res, 200, { data: page.items, next_cursor: nextCursor });
  };
}

/** `GET /v1/properties/{id}?country=CC`: one published listing, or 404 `not_found`. */
export function getProperty(stores: ListingStores): RequestHandler {
  return async function answerProperty(req, res) {
    const { country } = res.locals.itemQuery!;
    const result = await storeFor(stores, country).getListing(country, req.params.id as string, callContext(res));
    if (result.kind !== 'item') throw errorForUpstream(result);
    sendJson(res, 200, { data: result.item });
  };
}
