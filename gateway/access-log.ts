import type { Logger } from 'pino';
import { loggableUrl } from './logging';
import type { RequestContext } from './pipeline';

/**
 * The access line of one answer, in the shape pino-http writes (`req`, `res`, `responseTime`) so
 * log pipelines that parse pino-http parse it too, with the gateway's own fields beside them:
 *
 *     {"level":"info","time":…,"service":"gateway","req":{"id":"…","method":"GET","url":"/v1/ping",
 *      "remoteAddress":"203.0.113.9"},"res":{"statusCode":200},"responseTime":0.4,"key_id":"acme",
 *      "msg":"answered"}
 *
 * `req` carries no headers, ever (so never `x-api-key`), and the URL in its redacted form
 * (loggableUrl, which depends on the answer's status). `res.statusCode` is 499 when the caller went
 * away first. `responseTime` is in milliseconds, one decimal. Level `error` for 5xx, else `info`.
 */
export interface AccessLine {
  req: { id: string; method: string | undefined; url: string; remoteAddress: string };
  res: { statusCode: number };
  responseTime: number;
  key_id?: string;
  key_value?: string;
  error?: string;
  reason?: string;
  window?: string;
  upstream?: string;
  /** The answer's body: its encoding (`identity` when not compressed), its size and the size sent. */
  encoding?: string;
  bytes?: number;
  sent_bytes?: number;
  /** The request's recorded span (tracing on and sampled). */
  trace_id?: string;
  span_id?: string;
}

/** The line's fields for this answer. Never a key value, a header or the URL as sent. */
export function accessLine(ctx: RequestContext, status: number, seconds: number): AccessLine {
  const line: AccessLine = {
    req: {
      id: ctx.requestId,
      method: ctx.req.method,
      url: loggableUrl(ctx.req.url ?? '/', (status >= 200 && status < 300) || status === 304),
      remoteAddress: ctx.clientIp,
    },
    res: { statusCode: status },
    responseTime: Math.round(seconds * 1e4) / 10,
  };
  // What answers a ticket: whose key (also when refused after its record was found), which of its
  // values, and for a refusal why, which window, which upstream failure. Never a key value.
  const keyId = ctx.key?.id ?? ctx.refusedKeyId;
  if (keyId) line.key_id = keyId;
  if (ctx.keyValue) line.key_value = ctx.keyValue;
  if (ctx.errorCode) {
    line.error = ctx.errorCode;
    if (ctx.reason) line.reason = ctx.reason;
    if (ctx.window) line.window = ctx.window;
    if (ctx.upstream) line.upstream = ctx.upstream;
  }
  if (ctx.encoded) {
    line.encoding = ctx.encoded.encoding;
    line.bytes = ctx.encoded.bytes;
    line.sent_bytes = ctx.encoded.sentBytes;
  }
  const ids = ctx.trace?.ids();
  if (ids) {
    line.trace_id = ids.traceId;
    line.span_id = ids.spanId;
  }
  return line;
}

/** Writes the access line: one pino call, no child logger. */
export function logAnswered(logger: Logger, ctx: RequestContext, status: number, seconds: number): void {
  const line = accessLine(ctx, status, seconds);
  if (status >= 500) logger.error(line, 'answered');
  else logger.info(line, 'answered');
}
