import { createJsonCaller, isFailure, parseAnswer, type CallContext, type JsonAnswer } from './json-caller';
import type { UpstreamFailure } from './outcome';
import { checkPageBytes } from './page-bytes';
import { isPrivateField, passThroughItems } from './page-json';

export type { CallContext };

export type Listing = Record<string, unknown> & { id: string; country: string };

export interface PageRequest {
  readonly country: string;
  readonly listingType?: string;
  readonly propertyType?: string;
  readonly limit: number;
  /** Position after which the page starts (from a cursor); absent for the first page. */
  readonly after?: string;
}

/**
 * A page: its published listings as the bytes of a JSON array (ready to send: the store's own bytes
 * when they are provably clean, else the cleaned listings serialised), and where the next page starts.
 */
export type PageResult = { readonly kind: 'page'; readonly items: Buffer; readonly nextAfter: string | null } | UpstreamFailure;

/**
 * The page format the gateway asks for (README, "Listing store contract"): request header
 * `X-Page-Format: public-array`; a store that speaks it answers with the same header, the JSON array
 * of the page's listings as its body and the next position in `X-Next-After` (absent on the last
 * page). A store that does not answers `{items, next_after}` as before, and that is read as before.
 */
export const PAGE_FORMAT_REQUEST = Object.freeze({ 'x-page-format': 'public-array' });
const PUBLIC_ARRAY = 'public-array';
/** A position in `X-Next-After`: visible ASCII, as a header carries it unchanged. */
const HEADER_POSITION = /^[\x21-\x7e]{1,1024}$/;
export type ItemResult = { readonly kind: 'item'; readonly item: Listing } | UpstreamFailure;

export interface ListingsClient {
  listPage(request: PageRequest, ctx: CallContext): Promise<PageResult>;
  getListing(country: string, id: string, ctx: CallContext): Promise<ItemResult>;
  /** True when the data service answers its health check (readiness). */
  healthy(ctx: CallContext): Promise<boolean>;
  close(): Promise<void>;
}

export interface ListingsClientOptions {
  readonly baseUrl: string;
  readonly timeoutMs: number;
  /** Upper bound of pooled keep-alive connections to the data service. */
  readonly connections?: number;
}

/** A listing without the data service's private fields (`isPrivateField`). */
export function publicListing(item: Record<string, unknown>): Listing {
  const out: Record<string, unknown> = {};
  for (const field in item) {
    if (isPrivateField(field)) continue;
    out[field] = item[field];
  }
  return out as Listing;
}

/** Never a withdrawn listing, never a private field, whatever the store sends. */
const cleanedItems = (items: readonly Listing[]): Buffer => Buffer.from(JSON.stringify(items.filter((item) => item.withdrawn !== true).map(publicListing)));

const isListing = (v: unknown): v is Record<string, unknown> & { id: string; country: string } =>
  typeof v === 'object' && v !== null && typeof (v as Listing).id === 'string' && typeof (v as Listing).country === 'string';

/**
 * The data service's internal API, called through one pooled undici client (see json-caller.ts).
 * undici's pool inside the route measured far cheaper than http-proxy-middleware for calls whose
 * body the gateway reshapes (see the performance issue). Every failure is an `UpstreamFailure` value.
 */
export function createListingsClient(options: ListingsClientOptions): ListingsClient {
  const caller = createJsonCaller(options.baseUrl, options.timeoutMs, options.connections);
  /** Parses a body the raw call left unparsed, as `get` does. */
  const parsed = (status: number, bytes: Buffer): JsonAnswer => parseAnswer(status, bytes.toString('utf8'));

  /** The public-array format: the bytes themselves when provably clean, else parsed and cleaned. */
  function publicArrayPage(bytes: Buffer, nextHeader: string | string[] | undefined): PageResult {
    if (nextHeader !== undefined && (typeof nextHeader !== 'string' || !HEADER_POSITION.test(nextHeader))) return { kind: 'unreadable' };
    const nextAfter = nextHeader ?? null;
    if (checkPageBytes(bytes) === 'clean') return { kind: 'page', items: bytes, nextAfter };
    const answer = parsed(200, bytes);
    if (isFailure(answer)) return answer;
    if (!Array.isArray(answer.body)) return { kind: 'unreadable' };
    for (const item of answer.body) if (!isListing(item)) return { kind: 'unreadable' };
    return { kind: 'page', items: cleanedItems(answer.body as Listing[]), nextAfter };
  }

  /** The classic format `{items, next_after}`. */
  function classicPage(answer: JsonAnswer): PageResult {
    if (isFailure(answer)) return answer;
    if (answer.status !== 200) return { kind: 'server_error', status: answer.status };
    if (typeof answer.body !== 'object' || answer.body === null) return { kind: 'unreadable' };
    const body = answer.body as { items?: unknown; next_after?: unknown };
    if (!Array.isArray(body.items) || !(typeof body.next_after === 'string' || body.next_after === null)) return { kind: 'unreadable' };
    for (const item of body.items) if (!isListing(item)) return { kind: 'unreadable' };
    const page = body as { items: Listing[]; next_after: string | null };
    // The store's own text when it is provably the clean items array; else the cleaned items.
    const raw = passThroughItems(answer.text, page);
    return { kind: 'page', items: raw === undefined ? cleanedItems(page.items) : Buffer.from(raw), nextAfter: page.next_after };
  }

  return {
    async listPage(request, ctx) {
      let path = `/internal/v1/listings?country=${request.country}&limit=${request.limit}`;
      if (request.listingType) path += `&listing_type=${request.listingType}`;
      if (request.propertyType) path += `&property_type=${request.propertyType}`;
      if (request.after !== undefined) path += `&after=${encodeURIComponent(request.after)}`;
      const answer = await caller.getRaw(path, ctx, PAGE_FORMAT_REQUEST);
      if (isFailure(answer)) return answer;
      if (answer.status === 200 && answer.headers['x-page-format'] === PUBLIC_ARRAY) return publicArrayPage(answer.bytes, answer.headers['x-next-after']);
      return classicPage(parsed(answer.status, answer.bytes));
    },

    async getListing(country, id, ctx) {
      const answer = await caller.get(`/internal/v1/listings/${country}/${encodeURIComponent(id)}`, ctx);
      if (isFailure(answer)) return answer;
      if (typeof answer.body !== 'object' || answer.body === null) return answer.status === 200 ? { kind: 'unreadable' } : { kind: 'server_error', status: answer.status };
      const body = answer.body as { item?: unknown; code?: unknown };
      if (answer.status === 404 && body.code === 'LISTING_NOT_FOUND') return { kind: 'not_found' };
      if (answer.status !== 200) return { kind: 'server_error', status: answer.status };
      if (!isListing(body.item)) return { kind: 'unreadable' };
      if (body.item.withdrawn === true || body.item.country !== country || body.item.id !== id) return { kind: 'not_found' };
      return { kind: 'item', item: publicListing(body.item) };
    },

    async healthy(ctx) {
      const answer = await caller.get('/internal/health', ctx);
      return !isFailure(answer) && answer.status === 200;
    },

    close: () => caller.close(),
  };
}
