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

type Body = Dispatcher.ResponseData['body'];

/**
 * The body as bytes, or undefined when it is larger than MAX_ANSWER_BYTES. A declared length within
 * the cap is read in one go (undici's own `arrayBuffer()`, no decoding); an undeclared one is
 * counted chunk by chunk.
 */
async function readCapped(body: Body, contentLength: string | string[] | undefined): Promise<Buffer | undefined> {
  const declared = typeof contentLength === 'string' ? Number(contentLength) : NaN;
  if (declared > MAX_ANSWER_BYTES) return discard(body);
  if (declared >= 0) return Buffer.from(await body.arrayBuffer()); // undici fails the read if more arrives than declared
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_ANSWER_BYTES) return discard(body);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

/** Drops a body unread; undici reports the drop as an error event, which is expected here. */
function discard(body: Body): undefined {
  body.once('error', () => undefined);
  body.destroy();
  return undefined;
}

/**
 * GET-and-parse over one undici `Pool` to one upstream: keep-alive connections, reused; a timeout
 * for the whole call (connect, head and body); the caller's abort passed on. Every failure is a
 * value: unreachable, timeout, 503 (unavailable), a non-JSON 2xx (unreadable) or non-JSON error
 * (server_error), aborted. Only `accept` and `x-request-id` are sent: never the caller's headers.
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
  const baseHeaders = (ctx: CallContext): Record<string, string> => ({ ...ctx.headers, accept: 'application/json', 'x-request-id': ctx.requestId });

  async function call(pathAndQuery: string, ctx: CallContext, headers: Record<string, string>): Promise<RawAnswer> {
    const { signal } = ctx;
    const timer = setTimeout(() => signal.abort(TIMED_OUT), timeoutMs);
    const timedOut = (): boolean => signal.reason === TIMED_OUT;
    const callerLeft = (): boolean => signal.aborted && !timedOut();
    let status: number;
    let answerHeaders: IncomingHttpHeaders;
    let bytes: Buffer;
    try {
      const answer = await pool.request({
        path: prefix + pathAndQuery,
        method: 'GET',
        headers,
        signal,
      });
      status = answer.statusCode;
      answerHeaders = answer.headers;
      try {
        const read = await readCapped(answer.body, answer.headers['content-length']);
        if (read === undefined) return { kind: 'unreadable' }; // over MAX_ANSWER_BYTES: never buffered whole
        bytes = read;
      } catch (err) {
        if (callerLeft()) return { kind: 'aborted' };
        if (timedOut() || err instanceof undiciErrors.BodyTimeoutError) return { kind: 'timeout' };
        return { kind: 'unreadable' };
      }
    } catch (err) {
      if (callerLeft()) return { kind: 'aborted' };
      if (timedOut() || err instanceof undiciErrors.HeadersTimeoutError || err instanceof undiciErrors.ConnectTimeoutError) {
        return { kind: 'timeout' };
      }
      return { kind: 'unreachable' };
    } finally {
      clearTimeout(timer);
    }
    if (status === 503) return { kind: 'unavailable', retryAfterSeconds: parseRetryAfter(answerHeaders['retry-after']) };
    return { status, headers: answerHeaders, bytes };
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
