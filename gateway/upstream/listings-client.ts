import { Pool, errors as undiciErrors } from 'undici';
import { parseRetryAfter, type UpstreamFailure } from './outcome';

export type Listing = Record<string, unknown> & { id: string; country: string };

export interface PageRequest {
  readonly country: string;
  readonly listingType?: string;
  readonly propertyType?: string;
  readonly limit: number;
  /** Position after which the page starts (from a cursor); absent for the first page. */
  readonly after?: string;
}

export type PageResult = { readonly kind: 'page'; readonly items: Listing[]; readonly nextAfter: string | null } | UpstreamFailure;
export type ItemResult = { readonly kind: 'item'; readonly item: Listing } | UpstreamFailure;

export interface CallContext {
  readonly requestId: string;
  /** Aborted when the caller goes away, so the upstream request is dropped too. */
  readonly signal: AbortSignal;
}

export interface ListingsClient {
  listPage(request: PageRequest, ctx: CallContext): Promise<PageResult>;
  getListing(country: string, id: string, ctx: CallContext): Promise<ItemResult>;
  close(): Promise<void>;
}

export interface ListingsClientOptions {
  readonly baseUrl: string;
  readonly timeoutMs: number;
  /** Upper bound of pooled keep-alive connections to the data service. */
  readonly connections?: number;
}

/** Fields of the data service that never leave the gateway: the withdrawn flag and `_`-prefixed storage fields. */
function publicListing(item: Record<string, unknown>): Listing {
  const out: Record<string, unknown> = {};
  for (const field in item) {
    if (field === 'withdrawn' || field.charCodeAt(0) === 95 /* _ */) continue;
    out[field] = item[field];
  }
  return out as Listing;
}

const isListing = (v: unknown): v is Record<string, unknown> & { id: string; country: string } =>
  typeof v === 'object' && v !== null && typeof (v as Listing).id === 'string' && typeof (v as Listing).country === 'string';

/**
 * The data service's internal API, called through one undici `Pool` (keep-alive connections,
 * reused). undici's pooled client inside the route measured far cheaper than http-proxy-middleware
 * for calls whose body the gateway reshapes (see the performance issue). Every failure is returned
 * as an `UpstreamFailure` value; nothing here throws for a bad upstream.
 */
export function createListingsClient(options: ListingsClientOptions): ListingsClient {
  const base = new URL(options.baseUrl);
  const prefix = base.pathname.replace(/\/$/, '');
  const pool = new Pool(base.origin, {
    connections: options.connections ?? 128,
    keepAliveTimeout: 30_000,
    headersTimeout: options.timeoutMs,
    bodyTimeout: options.timeoutMs,
    connectTimeout: Math.min(options.timeoutMs, 5_000),
  });

  async function getJson(path: string, ctx: CallContext): Promise<{ status: number; body: unknown; retryAfter?: number } | UpstreamFailure> {
    const timeout = AbortSignal.timeout(options.timeoutMs);
    const signal = AbortSignal.any([ctx.signal, timeout]);
    let status: number;
    let headers: Record<string, string | string[] | undefined>;
    let text: string;
    try {
      const answer = await pool.request({
        path: prefix + path,
        method: 'GET',
        headers: { accept: 'application/json', 'x-request-id': ctx.requestId },
        signal,
      });
      status = answer.statusCode;
      headers = answer.headers;
      try {
        text = await answer.body.text();
      } catch (err) {
        if (ctx.signal.aborted) return { kind: 'aborted' };
        if (timeout.aborted || err instanceof undiciErrors.BodyTimeoutError) return { kind: 'timeout' };
        return { kind: 'unreadable' };
      }
    } catch (err) {
      if (ctx.signal.aborted) return { kind: 'aborted' };
      if (timeout.aborted || err instanceof undiciErrors.HeadersTimeoutError || err instanceof undiciErrors.ConnectTimeoutError) {
        return { kind: 'timeout' };
      }
      return { kind: 'unreachable' };
    }
    if (status === 503) return { kind: 'unavailable', retryAfterSeconds: parseRetryAfter(headers['retry-after']) };
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      return status >= 200 && status < 300 ? { kind: 'unreadable' } : { kind: 'server_error', status };
    }
    return { status, body };
  }

  const isFailure = (r: object): r is UpstreamFailure => 'kind' in r;

  return {
    async listPage(request, ctx) {
      let path = `/internal/v1/listings?country=${request.country}&limit=${request.limit}`;
      if (request.listingType) path += `&listing_type=${request.listingType}`;
      if (request.propertyType) path += `&property_type=${request.propertyType}`;
      if (request.after !== undefined) path += `&after=${encodeURIComponent(request.after)}`;
      const answer = await getJson(path, ctx);
      if (isFailure(answer)) return answer;
      if (answer.status !== 200) return { kind: 'server_error', status: answer.status };
      const body = answer.body as { items?: unknown; next_after?: unknown };
      if (!Array.isArray(body.items) || !(typeof body.next_after === 'string' || body.next_after === null)) return { kind: 'unreadable' };
      const items: Listing[] = [];
      for (const item of body.items) {
        if (!isListing(item)) return { kind: 'unreadable' };
        if (item.withdrawn === true) continue; // never a withdrawn listing, whatever the store sends
        items.push(publicListing(item));
      }
      return { kind: 'page', items, nextAfter: body.next_after };
    },

    async getListing(country, id, ctx) {
      const answer = await getJson(`/internal/v1/listings/${country}/${encodeURIComponent(id)}`, ctx);
      if (isFailure(answer)) return answer;
      const body = answer.body as { item?: unknown; code?: unknown };
      if (answer.status === 404 && body.code === 'LISTING_NOT_FOUND') return { kind: 'not_found' };
      if (answer.status !== 200) return { kind: 'server_error', status: answer.status };
      if (!isListing(body.item)) return { kind: 'unreadable' };
      if (body.item.withdrawn === true || body.item.country !== country || body.item.id !== id) return { kind: 'not_found' };
      return { kind: 'item', item: publicListing(body.item) };
    },

    close: () => pool.close(),
  };
}
