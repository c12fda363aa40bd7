/**
 * The internal HTTP API of the data service, on bare node:http: it is the baseline the gateway is
 * benchmarked against, so it adds nothing per request beyond routing, a query check, one index
 * call and one JSON.stringify. The server is returned unstarted so tests and main choose the port.
 *
 *   GET /internal/v1/listings?country=&listing_type=&property_type=&limit=&after=
 *       (`{items, next_after}`; with `X-Page-Format: public-array`, the items array alone)
 *   GET /internal/v1/listings/{COUNTRY}/{id}
 *   GET /internal/health
 */
import http, { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import { LISTING_TYPES, ListingType, PROPERTY_TYPES, PropertyType } from './listing';
import type { ListingFilter, ListingIndex } from './listing-index';
import type { ServerSpans } from '../gateway/tracing/request-trace';

/** What the server needs from the index; a narrow type so tests can substitute a failing one. */
export type ListingSource = Pick<ListingIndex, 'page' | 'get' | 'size'>;

export const DEFAULT_LIMIT = 20;
export const MAX_LIMIT = 1000;
/**
 * Longer than the usual 60 s idle timeout of client pools, so the server never closes a pooled
 * connection at the moment the gateway reuses it (which would surface as a spurious ECONNRESET).
 */
export const KEEP_ALIVE_TIMEOUT_MS = 65_000;

const LIST_PATH = '/internal/v1/listings';
const ITEM_PREFIX = '/internal/v1/listings/';
const HEALTH_PATH = '/internal/health';

const LIST_PARAMETERS = ['country', 'listing_type', 'property_type', 'limit', 'after'] as const;
const COUNTRY_PATTERN = /^[A-Z]{2}$/;
const LIMIT_PATTERN = /^[1-9][0-9]{0,3}$/;
/** Positions are ids of earlier items, so they share the id alphabet and length. */
const POSITION_PATTERN = /^[A-Za-z0-9._~-]{1,128}$/;

/** A client mistake in the query or path: answered 400 with the message as detail. */
class BadRequest extends Error {}

function send(res: ServerResponse, status: number, body: unknown): number {
  const json = JSON.stringify(body);
  res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(json) });
  res.end(json);
  return status;
}

/**
 * Reads the query string, allowing only the named parameters, each at most once and non-empty:
 * a gateway bug that sends a misspelt or doubled filter must fail loudly, not widen the result.
 */
function readQuery(query: string, allowed: readonly string[]): Map<string, string> {
  const params = new Map<string, string>();
  if (query === '') return params;
  for (const [name, value] of new URLSearchParams(query)) {
    if (!allowed.includes(name)) throw new BadRequest(`unknown query parameter "${name}"`);
    if (params.has(name)) throw new BadRequest(`query parameter "${name}" is repeated`);
    if (value === '') throw new BadRequest(`query parameter "${name}" is empty`);
    params.set(name, value);
  }
  return params;
}

function readEnum<T extends string>(params: Map<string, string>, name: string, values: readonly T[]): T | undefined {
  const value = params.get(name);
  if (value === undefined) return undefined;
  if (!(values as readonly string[]).includes(value)) throw new BadRequest(`${name} must be one of ${values.join(', ')}`);
  return value as T;
}

/**
 * The page format the gateway passes through as bytes (its README, "Listing store contract"): asked
 * for with this request header, confirmed with the same response header; the body is the JSON array
 * of the page's published listings without private fields, the next position in `X-Next-After`
 * (absent on the last page). The index pages hold published records only, without the flag.
 */
export const PAGE_FORMAT_HEADER = 'x-page-format';
export const PUBLIC_ARRAY = 'public-array';

function listListings(index: ListingSource, query: string, req: IncomingMessage, res: ServerResponse): number {
  const params = readQuery(query, LIST_PARAMETERS);
  const country = params.get('country');
  if (country === undefined) throw new BadRequest('country is required');
  if (!COUNTRY_PATTERN.test(country)) throw new BadRequest('country must be two upper-case letters (ISO 3166-1 alpha-2)');
  const filter: ListingFilter = { country };
  const listingType = readEnum<ListingType>(params, 'listing_type', LISTING_TYPES);
  if (listingType !== undefined) filter.listingType = listingType;
  const propertyType = readEnum<PropertyType>(params, 'property_type', PROPERTY_TYPES);
  if (propertyType !== undefined) filter.propertyType = propertyType;

  let limit = DEFAULT_LIMIT;
  const rawLimit = params.get('limit');
  if (rawLimit !== undefined) {
    limit = LIMIT_PATTERN.test(rawLimit) ? Number(rawLimit) : 0;
    if (limit < 1 || limit > MAX_LIMIT) throw new BadRequest(`limit must be an integer from 1 to ${MAX_LIMIT}`);
  }
  const after = params.get('after');
  if (after !== undefined && !POSITION_PATTERN.test(after)) {
    throw new BadRequest('after must be the id of the last item of the previous page');
  }

  const page = index.page(filter, after, limit);
  if (req.headers[PAGE_FORMAT_HEADER] === PUBLIC_ARRAY) {
    const json = JSON.stringify(page.items);
    const headers: Record<string, string | number> = { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(json), 'X-Page-Format': PUBLIC_ARRAY };
    if (page.nextAfter !== null) headers['X-Next-After'] = page.nextAfter;
    res.writeHead(200, headers);
    res.end(json);
    return 200;
  }
  return send(res, 200, { items: page.items, next_after: page.nextAfter });
}

function getListing(index: ListingSource, rest: string, query: string, res: ServerResponse): number {
  readQuery(query, []);
  const slash = rest.indexOf('/');
  const country = rest.slice(0, slash);
  let id: string;
  try {
    id = decodeURIComponent(rest.slice(slash + 1));
  } catch {
    throw new BadRequest('the listing id is not valid percent-encoding');
  }
  const listing = COUNTRY_PATTERN.test(country) ? index.get(country, id) : undefined;
  if (listing === undefined) {
    return send(res, 404, { code: 'LISTING_NOT_FOUND', detail: `no listing ${JSON.stringify(id)} in country ${JSON.stringify(country)}` });
  }
  return send(res, 200, { item: listing });
}

/** `{COUNTRY}/{id}` after the item prefix: exactly two non-empty segments, else not this route. */
function isItemPath(rest: string): boolean {
  const slash = rest.indexOf('/');
  return slash > 0 && slash < rest.length - 1 && rest.indexOf('/', slash + 1) < 0;
}

function handle(index: ListingSource, req: IncomingMessage, res: ServerResponse): number {
  const url = req.url ?? '/';
  const mark = url.indexOf('?');
  const path = mark < 0 ? url : url.slice(0, mark);
  const query = mark < 0 ? '' : url.slice(mark + 1);

  let route: 'list' | 'item' | 'health';
  if (path === LIST_PATH) route = 'list';
  else if (path.startsWith(ITEM_PREFIX) && isItemPath(path.slice(ITEM_PREFIX.length))) route = 'item';
  else if (path === HEALTH_PATH) route = 'health';
  else return send(res, 404, { code: 'NO_ROUTE', detail: `no route for ${path}` });

  if (req.method !== 'GET') {
    res.setHeader('Allow', 'GET');
    return send(res, 405, { code: 'METHOD_NOT_ALLOWED' });
  }

  try {
    switch (route) {
      case 'list':
        return listListings(index, query, req, res);
      case 'item':
        return getListing(index, path.slice(ITEM_PREFIX.length), query, res);
      case 'health':
        readQuery(query, []);
        return send(res, 200, { status: 'ok', listings: index.size });
    }
  } catch (error) {
    if (error instanceof BadRequest) return send(res, 400, { code: 'BAD_REQUEST', detail: error.message });
    throw error;
  }
}

/** The route of a path, for its span: a template, never the id or query. */
function spanRoute(url: string | undefined): string {
  const path = (url ?? '/').split('?', 1)[0]!;
  return path === LIST_PATH || path === HEALTH_PATH ? path : path.startsWith(ITEM_PREFIX) ? `${ITEM_PREFIX}{country}/{id}` : 'unmatched';
}

/** `serverSpans`: a span per request continuing the caller's trace (when OTEL_* turn tracing on). */
export function createBackendServer(index: ListingSource, logger: Logger, serverSpans?: ServerSpans): http.Server {
  const server = http.createServer((req, res) => {
    if (serverSpans) {
      const end = serverSpans(req, spanRoute(req.url));
      res.once('close', () => end(res.statusCode));
    }
    const timed = logger.isLevelEnabled('debug');
    const started = timed ? performance.now() : 0;
    // A GET body is never read; draining it keeps the connection usable for the next request.
    req.resume();
    let status: number;
    try {
      status = handle(index, req, res);
    } catch (error) {
      logger.error({ err: error, method: req.method, url: req.url }, 'request failed');
      if (res.headersSent) {
        res.destroy();
        status = 500;
      } else {
        status = send(res, 500, { code: 'INTERNAL', detail: error instanceof Error ? error.message : String(error) });
      }
    }
    if (timed) logger.debug({ method: req.method, url: req.url, status, ms: Math.round((performance.now() - started) * 1000) / 1000 }, 'request');
  });
  server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
  // Kept above the keep-alive timeout: older Node versions cut idle keep-alive sockets when it was lower.
  server.headersTimeout = KEEP_ALIVE_TIMEOUT_MS + 1_000;
  return server;
}
