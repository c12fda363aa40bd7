import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import proxyaddr from 'proxy-addr';
import { logAnswered } from './access-log';
import { normaliseAddress } from './client-address';
import { carriesKey } from './keys/key-format';
import type { Metrics } from './ops/metrics';
import type { HistogramCell } from './ops/tally';
import type { RequestContext, RequestTracer } from './pipeline';

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;
/** Metrics label of each route: its path template (a bounded set). */
const ROUTE_LABEL: Readonly<Record<RequestContext['route'], string>> = {
  ping: '/v1/ping',
  properties: '/v1/properties',
  property: '/v1/properties/{id}',
  insights: '/v1/insights/*',
  reference: 'reference',
  unmatched: 'unmatched',
};

export type BeginRequest = (req: IncomingMessage, res: ServerResponse) => RequestContext;

/**
 * Makes `beginRequest`, the first thing done for every request: it builds the request's context,
 * with the request id (the caller's `x-request-id` when well-formed and free of keys, else a new
 * UUID; returned and sent upstream) and the client address (X-Forwarded-For counts only from
 * configured proxies, right-most untrusted address first; never blanket trust). When the answer is
 * done: one log line (access-log.ts: pino-http's req/res/responseTime shape, written by hand) and
 * the metrics. Headers are never logged, so neither is `x-api-key`; the URL is logged redacted.
 */
export function createBeginRequest(
  logger: Logger,
  metrics: Metrics,
  trustedProxies: readonly string[],
  /** Told of every finished answer to an identified key (usage history). */
  onKeyAnswered?: (keyId: string, status: number, code: string | undefined) => void,
  /** Traces (gateway/tracing/); absent when tracing is off: then one branch is all it costs. */
  tracer?: RequestTracer,
): BeginRequest {
  const trust = trustedProxies.length ? proxyaddr.compile([...trustedProxies]) : undefined;
  const tally = metrics.tally;
  // Per route, found once: its label and its duration histogram's counts (no label work per request).
  const routes = Object.fromEntries(
    Object.entries(ROUTE_LABEL).map(([name, label]) => [name, { label, duration: tally.duration.cell(label) }]),
  ) as Record<RequestContext['route'], { label: string; duration: HistogramCell }>;

  return function beginRequest(req, res) {
    const started = process.hrtime.bigint();
    const given = req.headers['x-request-id'];
    // A caller's id is echoed, logged and sent upstream: never when it carries a key (a client that
    // put its key in the wrong header), whatever the key step later decides.
    const requestId = typeof given === 'string' && REQUEST_ID.test(given) && !carriesKey(given, req.headers['x-api-key']) ? given : randomUUID();
    res.setHeader('X-Request-Id', requestId);
    const seen = trust ? proxyaddr(req, trust) : (req.socket.remoteAddress ?? '');
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const ctx: RequestContext = {
      req,
      res,
      path: q < 0 ? url : url.slice(0, q),
      rawQuery: q < 0 ? '' : url.slice(q + 1),
      requestId,
      clientIp: normaliseAddress(seen) ?? seen,
      route: 'unmatched',
      params: {},
    };
    if (tracer) ctx.trace = tracer(req, ctx.path);

    res.once('close', () => {
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      const status = res.writableFinished ? res.statusCode : 499; // 499: the caller went away first
      const code = ctx.errorCode ?? '';
      const keyId = ctx.key?.id;
      const route = routes[ctx.route];
      tally.requests.add(route.label, status, code);
      route.duration.observe(seconds);
      // Counted here, from the answer's reason (routes/error-handler.ts), so every upstream failure that
      // decided an answer is counted once, whichever layer found it (call, status or page shape).
      if (ctx.upstream) tally.upstreamErrors.add(ctx.upstream);
      if (keyId && metrics.countsKey(keyId)) tally.keyRequests.add(keyId, status);
      if (keyId && onKeyAnswered) onKeyAnswered(keyId, status, ctx.errorCode);
      ctx.trace?.end(ctx, status);
      logAnswered(logger, ctx, status, seconds);
    });
    return ctx;
  };
}
