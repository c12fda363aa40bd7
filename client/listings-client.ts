/**
 * A typed client for the `/v1` surface of the property listings API, following part 7 of the
 * interface: it branches on `error`, never on `message`; waits `Retry-After` on `rate_limited`
 * and `quota_exceeded` (up to a cap the caller sets); backs off on `internal_error`,
 * `not_configured` and `service_unavailable`; treats a code it does not know as a failure of its
 * HTTP status. Uses the global `fetch` of Node 20 (or the one given).
 */
import { ListingsApiError, ListingsNetworkError } from './errors';
import { decideRetry, type RetryLimits } from './retry-policy';
import type { CountryCode, ErrorBody, ListFilters, Listing, ListingPage, PingResult } from './types';

export interface ListingsClientOptions {
  /** Where the service is, e.g. `http://127.0.0.1:8080` (a path prefix is kept). */
  baseUrl: string;
  /** The API key, sent as `x-api-key` from the server address registered for it. */
  apiKey: string;
  /** Longest wait the client accepts before a retry, in seconds (default 60). A longer `Retry-After` is thrown, not waited. */
  maxRetryWaitSeconds?: number;
  /** Retries after the first attempt of one call (default 3; 0: never retry). */
  maxRetries?: number;
  /** First back-off on 5xx and connection failures, doubling per retry (default 500 ms). */
  retryBaseDelayMs?: number;
  /** Time limit of one attempt, in milliseconds (default 30000). */
  timeoutMs?: number;
  /** The fetch to use (default: the global one). */
  fetch?: typeof fetch;
  /** How the client waits between attempts (default: a timer). */
  sleep?: (ms: number) => Promise<void>;
  /** Called before each wait for a retry: for logs and metrics. */
  onRetry?: (retry: RetryEvent) => void;
}

/** What `onRetry` is told: the failed attempt, why, and how long the client now waits. */
export interface RetryEvent {
  path: string;
  attempt: number;
  waitMs: number;
  /** The error answer, or the connection failure, that is being retried. */
  failure: ListingsApiError | Error;
}

/** The listings of one filter, page after page: iterate it for every listing, or `pages()` for pages. */
export interface PagedListings extends AsyncIterable<Listing> {
  /** Every page of the filter in order, from the first to the one whose `next_cursor` is `null`. */
  pages(): AsyncIterableIterator<ListingPage>;
}

const defaultSleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

export class ListingsClient {
  private readonly base: string;
  private readonly apiKey: string;
  private readonly limits: RetryLimits;
  private readonly timeoutMs: number;
  private readonly fetchImpl: typeof fetch;
  private readonly sleep: (ms: number) => Promise<void>;
  private readonly onRetry: (retry: RetryEvent) => void;

  constructor(options: ListingsClientOptions) {
    const url = new URL(options.baseUrl); // throws on a malformed base URL, here rather than on the first call
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new TypeError(`baseUrl must be http(s): ${options.baseUrl}`);
    if (typeof options.apiKey !== 'string' || options.apiKey.length === 0) throw new TypeError('apiKey is required');
    const count = (value: number | undefined, fallback: number, name: string): number => {
      const n = value ?? fallback;
      if (!Number.isFinite(n) || n < 0) throw new RangeError(`${name} must be a number >= 0, got ${value}`);
      return n;
    };
    this.base = url.href.replace(/\/+$/, '');
    this.apiKey = options.apiKey;
    this.limits = {
      maxRetries: Math.floor(count(options.maxRetries, 3, 'maxRetries')),
      maxRetryWaitSeconds: count(options.maxRetryWaitSeconds, 60, 'maxRetryWaitSeconds'),
      baseDelayMs: count(options.retryBaseDelayMs, 500, 'retryBaseDelayMs'),
      random: Math.random,
    };
    this.timeoutMs = count(options.timeoutMs, 30_000, 'timeoutMs');
    this.fetchImpl = options.fetch ?? globalThis.fetch;
    this.sleep = options.sleep ?? defaultSleep;
    this.onRetry = options.onRetry ?? (() => undefined);
  }

  /** `GET /v1/ping`: checks the key from this address; `ip` is the address the service sees. */
  ping(): Promise<PingResult> {
    return this.get<PingResult>('/v1/ping');
  }

  /** `GET /v1/properties/{id}?country=`: one published listing; 404 `not_found` if withdrawn or unknown there. */
  async getProperty(country: CountryCode, id: string): Promise<Listing> {
    const item = await this.get<{ data: Listing }>(`/v1/properties/${encodeURIComponent(id)}`, { country });
    return item.data;
  }

  /** `GET /v1/properties`: one page, the first or the one after `cursor` (the previous page's `next_cursor`). */
  getPropertiesPage(filters: ListFilters, cursor?: string): Promise<ListingPage> {
    return this.get<ListingPage>('/v1/properties', { ...filters, ...(cursor !== undefined ? { cursor } : {}) });
  }

  /**
   * Every listing of a filter, all pages, in the service's stable order. Pages are fetched as the
   * iteration reaches them. A `400 invalid_cursor` (e.g. a cursor expired during a very long walk)
   * is thrown: start a new iteration from the first page.
   */
  listProperties(filters: ListFilters): PagedListings {
    const frozen = { ...filters };
    const client = this;
    async function* pages(): AsyncGenerator<ListingPage> {
      let cursor: string | undefined;
      do {
        const page = await client.getPropertiesPage(frozen, cursor);
        yield page;
        cursor = page.next_cursor ?? undefined;
      } while (cursor !== undefined);
    }
    return {
      pages,
      async *[Symbol.asyncIterator]() {
        for await (const page of pages()) yield* page.data;
      },
    };
  }

  /** One GET with the retries of part 7. */
  private async get<T>(path: string, query: Record<string, string | number | undefined> = {}): Promise<T> {
    const params = new URLSearchParams();
    for (const [name, value] of Object.entries(query)) if (value !== undefined) params.append(name, String(value));
    const search = params.toString();
    const url = `${this.base}${path}${search ? `?${search}` : ''}`;

    for (let attempt = 1; ; attempt++) {
      let response: Response;
      try {
        response = await this.fetchImpl(url, {
          method: 'GET',
          // Compressed answers asked for by name: fetch decodes br and gzip on every Node it runs on.
          headers: { 'x-api-key': this.apiKey, accept: 'application/json', 'accept-encoding': 'br, gzip' },
          signal: AbortSignal.timeout(this.timeoutMs),
          redirect: 'error',
        });
      } catch (err) {
        const decision = decideRetry({ retriesSoFar: attempt - 1 }, this.limits);
        if (!decision.retry) throw new ListingsNetworkError(`GET ${path}: no answer (${describeFailure(err)}); ${decision.reason}`, attempt, { cause: err });
        this.onRetry({ path, attempt, waitMs: decision.waitMs, failure: err as Error });
        await this.sleep(decision.waitMs);
        continue;
      }

      const text = await response.text().catch(() => '');
      if (response.ok) {
        try {
          return JSON.parse(text) as T;
        } catch (err) {
          throw new ListingsNetworkError(`GET ${path}: answer ${response.status} is not JSON`, attempt, { cause: err });
        }
      }

      const error = apiErrorOf(response, text, attempt);
      const decision = decideRetry({ status: error.status, code: error.error, retryAfterSeconds: error.retryAfter, retriesSoFar: attempt - 1 }, this.limits);
      if (!decision.retry) throw error;
      this.onRetry({ path, attempt, waitMs: decision.waitMs, failure: error });
      await this.sleep(decision.waitMs);
    }
  }
}

/** The error an answer carries: its code and fields, or `http_<status>` when its body has none. */
function apiErrorOf(response: Response, text: string, attempts: number): ListingsApiError {
  let body: Partial<ErrorBody> = {};
  try {
    const parsed: unknown = JSON.parse(text);
    if (parsed && typeof parsed === 'object') body = parsed as Partial<ErrorBody>;
  } catch {
    // not JSON (e.g. a proxy's HTML page): the status alone says what happened
  }
  const retryAfter = parseRetryAfter(response.headers.get('retry-after'));
  const requestId = response.headers.get('x-request-id') ?? undefined;
  return new ListingsApiError({
    error: typeof body.error === 'string' && body.error ? body.error : `http_${response.status}`,
    status: response.status,
    message: typeof body.message === 'string' && body.message ? body.message : `HTTP ${response.status}`,
    attempts,
    ...(retryAfter !== undefined ? { retryAfter } : {}),
    ...(typeof body.parameter === 'string' ? { parameter: body.parameter } : {}),
    ...(typeof body.ip === 'string' ? { ip: body.ip } : {}),
    ...(requestId !== undefined ? { requestId } : {}),
  });
}

/** `Retry-After` in seconds: delay-seconds, or an HTTP-date turned into seconds from now (at least 0). */
export function parseRetryAfter(value: string | null, now: number = Date.now()): number | undefined {
  if (value === null) return undefined;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text);
  const date = Date.parse(text);
  return Number.isNaN(date) ? undefined : Math.max(0, Math.ceil((date - now) / 1000));
}

/** `fetch failed (ECONNREFUSED)`: fetch's own message names no cause, its `cause` does. */
function describeFailure(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  const cause = err instanceof Error ? (err.cause as { code?: unknown; message?: unknown } | undefined) : undefined;
  const detail = typeof cause?.code === 'string' ? cause.code : typeof cause?.message === 'string' ? cause.message : '';
  return detail ? `${message} (${detail})` : message;
}
