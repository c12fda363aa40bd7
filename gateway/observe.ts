import { randomUUID } from 'node:crypto';
import type { Request, RequestHandler } from 'express';
import type { Logger } from 'pino';
import { normaliseAddress } from './keys/address';
import { loggableUrl } from './logging';
import type { Metrics } from './ops/metrics';

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** The route template that answered ("unmatched" for 404s), a bounded label. */
function routeOf(req: Request): string {
  const path = (req.route as { path?: string | string[] } | undefined)?.path;
  if (path === undefined) return 'unmatched';
  return Array.isArray(path) ? path[0]! : path;
}

/**
 * First step of every request: the request id (the caller's `x-request-id` when well-formed, else a
 * new UUID; returned and sent upstream), the client address, and, when the answer is done, one log
 * line and the metrics. Written here rather than with pino-http: no child logger per request, one
 * object per line. Headers are never logged, so neither is `x-api-key`; the URL is logged redacted.
 */
export function observeRequests(logger: Logger, metrics: Metrics): RequestHandler {
  return function observeRequest(req, res, next) {
    const started = process.hrtime.bigint();
    const given = req.headers['x-request-id'];
    const requestId = typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
    res.setHeader('X-Request-Id', requestId);
    res.locals.requestId = requestId;
    res.locals.clientIp = normaliseAddress(req.ip ?? '') ?? req.ip ?? '';

    res.once('close', () => {
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      const status = res.writableFinished ? res.statusCode : 499; // 499: the caller went away first
      const route = routeOf(req);
      const code = res.locals.errorCode ?? '';
      const keyId = res.locals.key?.id;
      metrics.requests.inc({ route, status, code });
      metrics.duration.observe({ route }, seconds);
      if (keyId) metrics.keyRequests.inc({ key_id: keyId, status });
      const entry = {
        request_id: requestId,
        method: req.method,
        url: loggableUrl(req.originalUrl),
        ip: res.locals.clientIp,
        status,
        ms: Math.round(seconds * 1e4) / 10,
        ...(keyId ? { key_id: keyId } : {}),
        ...(code ? { error: code } : {}),
      };
      if (status >= 500) logger.error(entry, 'answered');
      else logger.info(entry, 'answered');
    });
    next();
  };
}
