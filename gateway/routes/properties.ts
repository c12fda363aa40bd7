// gateway/routes/: the public endpoint handlers (properties, insights, ping), the upstream call's context,
// and the one error handler of the public path.
import type { CursorCodec } from '../cursor/cursor-codec';
import { ApiError } from '../errors';
import type { Keyed, Step, WithCursor, WithItemQuery, WithListQuery } from '../pipeline';
import { sendJsonCompressible } from '../compression/send-compressed';
import type { ListingStores } from '../upstream/listing-stores';
import type { ListingsClient } from '../upstream/listings-client';
import { errorForUpstream } from '../upstream/outcome';
import { callContext } from './call-context';

/** Seconds a caller is told to wait when its country's store is not configured. */
const STORE_RETRY_AFTER_SECONDS = 3600;

/** The store serving `country`; 503 `not_configured` when no store is configured for it. */
function storeFor(stores: ListingStores, country: string): ListingsClient {
  const store = stores.forCountry(country);
  if (!store) throw new ApiError('not_configured', {}, STORE_RETRY_AFTER_SECONDS, `No listing store is configured for ${country} yet.`).because('no_store_for_country');
  return store;
}

const DATA_HEAD = Buffer.from('{"data":');
const LAST_PAGE_TAIL = Buffer.from(',"next_cursor":null}');

/** `GET /v1/properties`: one page from the data service, with a new cursor bound to key and filters. */
export function listProperties(stores: ListingStores, cursors: CursorCodec): Step<Keyed & WithListQuery & WithCursor> {
  return async function answerPropertiesPage(ctx) {
    const { listQuery: query, cursorFilters: filters } = ctx;
    const page = await storeFor(stores, query.country).listPage(
      { ...filters, limit: query.limit, ...(ctx.cursorPosition !== undefined ? { after: ctx.cursorPosition } : {}) },
      callContext(ctx),
    );
    if (page.kind !== 'page') throw errorForUpstream(page);
    const nextCursor = page.nextAfter === null ? null : cursors.issue(ctx.key.id, filters, page.nextAfter);
    // The envelope around the listings' bytes, as received when clean (page-bytes.ts); a cursor is
    // base64url and dots, so it needs no escaping.
    const tail = nextCursor === null ? LAST_PAGE_TAIL : Buffer.from(`,"next_cursor":"${nextCursor}"}`, 'latin1');
    sendJsonCompressible(ctx, Buffer.concat([DATA_HEAD, page.items, tail], DATA_HEAD.length + page.items.length + tail.length));
  };
}

/** `GET /v1/properties/{id}?country=CC`: one published listing, or 404 `not_found`. */
export function getProperty(stores: ListingStores): Step<WithItemQuery & { readonly params: { readonly id: string } }> {
  return async function answerProperty(ctx) {
    const { country } = ctx.itemQuery;
    const result = await storeFor(stores, country).getListing(country, ctx.params.id, callContext(ctx));
    if (result.kind !== 'item') throw errorForUpstream(result);
    sendJsonCompressible(ctx, Buffer.from(JSON.stringify({ data: result.item })));
  };
}
