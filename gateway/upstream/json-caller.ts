import { EventEmitter } from 'node:events';
import type { IncomingHttpHeaders } from 'node:http';
import { Pool, errors as undiciErrors, type Dispatcher } from 'undici';
import { parseRetryAfter, type UpstreamFailure } from './outcome';

/**
 * An abort signal for one upstream call. undici accepts any EventEmitter with `aborted` and
 * `reason`; this one costs far less per request than an AbortController (an EventTarget), let alone
 * AbortSignal.any/timeout, measured on this hot path.
 */
export class CallSignal extends EventEmitter {
  aborted = false;
  reason: unknown = undefined;
  abort(reason?: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    this.emit('abort');
  }
}

export interface CallContext {
  readonly requestId: string;
  /**
   * Aborted when the caller goes away, so the upstream request is dropped too; the call aborts it
   * itself, with `TIMED_OUT` as the reason, when the upstream takes too long.
   */
  readonly signal: CallSignal;
  /** Headers of the gateway's own to add (e.g. the insights caller identity); never the caller's. */
  readonly headers?: Readonly<Record<string, string>>;
  /** The request's trace, when tracing is on: the call gets a client span and sends its `traceparent`. */
  readonly trace?: CallTrace;
}

/** A traced upstream call: the headers naming its span (`traceparent`, `tracestate`), ended with the answer. */
export interface CallSpan {
  readonly headers: Readonly<Record<string, string>>;
  end(answer: RawAnswer): void;
}

/** Where an upstream call gets its client span. */
export interface CallTrace {
  call(origin: string, path: string): CallSpan;
}

/** The abort reason of a call that ran out of time. */
export const TIMED_OUT = new Error('upstream timed out');

/** A JSON answer of any status (parsed, and the text it was parsed from), or the failure that prevented one. */
export type JsonAnswer = { readonly status: number; readonly body: unknown; readonly text: string } | UpstreamFailure;

/** An answer of any status but 503 as bytes, with its headers, or the failure that prevented one. */
export type RawAnswer = { readonly status: number; readonly headers: IncomingHttpHeaders; readonly bytes: Buffer } | UpstreamFailure;

export interface JsonCaller {
  get(pathAndQuery: string, ctx: CallContext): Promise<JsonAnswer>;
  /** The answer's bytes, unparsed, with `extraHeaders` added to the request (the caller's protocol). */
  getRaw(pathAndQuery: string, ctx: CallContext, extraHeaders?: Readonly<Record<string, string>>): Promise<RawAnswer>;
  close(): Promise<void>;
}

/** A 2xx that is not JSON is unreadable; any other status a server error (the one rule for both paths). */
export function parseAnswer(status: number, text: string): JsonAnswer {
  try {
    return { status, body: JSON.parse(text) as unknown, text };
  } catch {
    return status >= 200 && status < 300 ? { kind: 'unreadable' } : { kind: 'server_error', status };
  }
}

export const isFailure = (answer: object): answer is UpstreamFailure => 'kind' in answer;

/** An upstream answer larger than this is refused unread: one answer must not take the process's memory. */
export const MAX_ANSWER_BYTES = 8 * 1024 * 1024;

/** The headers of an answer, names lower-cased; a repeated header's values in an array (as node:http has them). */
function headersOf(raw: Buffer[]): IncomingHttpHeaders {
  const headers: Record<string, string | string[]> = {};
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i]!.toString('latin1').toLowerCase();
    const value = raw[i + 1]!.toString('latin1');
    const seen = headers[name];
    if (seen === undefined) headers[name] = value;
    else if (Array.isArray(seen)) seen.push(value);
    else headers[name] = [seen, value];
  }
  return headers;
}

/** Thrown into undici's connection to drop an answer over MAX_ANSWER_BYTES unread. */
const TOO_LARGE = new Error('upstream answer over the size cap');

/**
 * One call's undici handler: the answer's bytes collected as they arrive, straight from the HTTP
 * parser. undici's `request()` wraps the same events in an AsyncResource, a Readable stream and a
 * promise per answer, and reading that stream whole costs more again; this handler does none of
 * that (measured: bench/levers.ts, "Upstream call: answer handling"). The whole call (connect, head
 * and body) runs against one timer; the caller's abort is passed on.
 */
class AnswerHandler implements Dispatcher.DispatchHandlers {
  private abortConnection: ((err: Error) => void) | undefined;
  private status = 0;
  private headers: IncomingHttpHeaders | undefined;
  private readonly chunks: Buffer[] = [];
  private size = 0;
  private done = false;
  private readonly timer: NodeJS.Timeout;
  /** Timed out or the caller left: settled at once (not when undici gets round to it), the connection dropped. */
  private readonly onAbort = (): void => {
    const timedOut = this.signal.reason === TIMED_OUT;
    this.settle(timedOut ? { kind: 'timeout' } : { kind: 'aborted' });
    // Not connected yet: onConnect aborts when the pool hands the call a connection.
    this.abortConnection?.(timedOut ? TIMED_OUT : REQUEST_ABORTED);
  };

  constructor(
    private readonly resolve: (answer: RawAnswer) => void,
    private readonly signal: CallSignal,
    timeoutMs: number,
  ) {
    this.timer = setTimeout(() => signal.abort(TIMED_OUT), timeoutMs);
    signal.once('abort', this.onAbort);
  }

  private settle(answer: RawAnswer): void {
    if (this.done) return;
    this.done = true;
    clearTimeout(this.timer);
    this.signal.off('abort', this.onAbort);
    this.resolve(answer);
  }

  onConnect(abort: (err?: Error) => void): void {
    if (this.signal.aborted) abort(this.signal.reason === TIMED_OUT ? TIMED_OUT : REQUEST_ABORTED);
    else this.abortConnection = abort;
  }

  onHeaders(statusCode: number, rawHeaders: Buffer[]): boolean {
    if (statusCode < 200) return true; // 1xx: the answer follows
    this.status = statusCode;
    this.headers = headersOf(rawHeaders);
    const declared = this.headers['content-length'];
    if (typeof declared === 'string' && Number(declared) > MAX_ANSWER_BYTES) this.tooLarge();
    return true;
  }

  onData(chunk: Buffer): boolean {
    if (this.done) return true;
    this.size += chunk.length;
    if (this.size > MAX_ANSWER_BYTES) this.tooLarge();
    else this.chunks.push(chunk);
    return true;
  }

  /** Over MAX_ANSWER_BYTES: refused unread, never buffered whole. */
  private tooLarge(): void {
    this.settle({ kind: 'unreadable' });
    this.abortConnection?.(TOO_LARGE);
  }

  onComplete(): void {
    const status = this.status;
    if (status === 503) return this.settle({ kind: 'unavailable', retryAfterSeconds: parseRetryAfter(this.headers!['retry-after']) });
    const bytes = this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks, this.size);
    this.settle({ status, headers: this.headers!, bytes });
  }

  onError(err: Error): void {
    const timedOut = this.signal.reason === TIMED_OUT;
    if (this.signal.aborted && !timedOut) return this.settle({ kind: 'aborted' });
    if (timedOut || err instanceof undiciErrors.HeadersTimeoutError || err instanceof undiciErrors.ConnectTimeoutError || err instanceof undiciErrors.BodyTimeoutError) {
      return this.settle({ kind: 'timeout' });
    }
    // Cut after the head (a short body, a reset mid-answer): unreadable; before it: unreachable.
    this.settle({ kind: this.headers ? 'unreadable' : 'unreachable' });
  }
}

/** The abort reason passed on when the caller went away. */
const REQUEST_ABORTED = new undiciErrors.RequestAbortedError();

/**
 * GET over one undici `Pool` to one upstream: keep-alive connections, reused; a timeout for the
 * whole call (connect, head and body); the caller's abort passed on. Every failure is a value:
 * unreachable, timeout, 503 (unavailable), a non-JSON 2xx (unreadable) or non-JSON error
 * (server_error), aborted. Only `accept`, `accept-encoding: identity` and `x-request-id` are sent (and
 * the trace context when traced): never the caller's headers.
 */
export function createJsonCaller(baseUrl: string, timeoutMs: number, connections = 128): JsonCaller {
  const base = new URL(baseUrl);
  const prefix = base.pathname.replace(/\/$/, '');
  const pool = new Pool(base.origin, {
    connections,
    keepAliveTimeout: 30_000,
    headersTimeout: timeoutMs,
    bodyTimeout: timeoutMs,
    connectTimeout: Math.min(timeoutMs, 5_000),
  });

  // The call's own headers (e.g. the caller's signed identity for insights), then the gateway's, which win.
  // `accept-encoding: identity`: the answer is read as bytes (a page's listings pass through as they
  // are), so an upstream behind a compressing proxy must not compress it.
  const baseHeaders = (ctx: CallContext): Record<string, string> => ({ ...ctx.headers, accept: 'application/json', 'accept-encoding': 'identity', 'x-request-id': ctx.requestId });

  function call(pathAndQuery: string, ctx: CallContext, headers: Record<string, string>): Promise<RawAnswer> {
    // Aborted already (the caller left before the call): nothing to ask, and no 'abort' event will
    // come to settle it; dispatched, it would wait for a connection only to be dropped on it.
    if (ctx.signal.aborted) return Promise.resolve(ctx.signal.reason === TIMED_OUT ? { kind: 'timeout' } : { kind: 'aborted' });
    const span = ctx.trace?.call(base.origin, prefix + pathAndQuery);
    if (span) Object.assign(headers, span.headers);
    return new Promise((resolve) => {
      const settle = span ? (answer: RawAnswer): void => (span.end(answer), resolve(answer)) : resolve;
      // undici hands its own refusals (a closed or destroyed pool, bad options) to onError: it settles.
      pool.dispatch({ path: prefix + pathAndQuery, method: 'GET', headers }, new AnswerHandler(settle, ctx.signal, timeoutMs));
    });
  }

  return {
    async get(pathAndQuery, ctx) {
      const raw = await call(pathAndQuery, ctx, baseHeaders(ctx));
      return isFailure(raw) ? raw : parseAnswer(raw.status, raw.bytes.toString('utf8'));
    },
    async getRaw(pathAndQuery, ctx, extraHeaders) {
      const headers = baseHeaders(ctx);
      if (extraHeaders) Object.assign(headers, extraHeaders);
      return call(pathAndQuery, ctx, headers);
    },
    close: () => pool.close(),
  };
}
