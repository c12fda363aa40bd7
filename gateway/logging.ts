import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import pino, { type Logger } from 'pino';
import pinoHttp, { type HttpLogger } from 'pino-http';

/** The process logger. Asynchronous destination: a slow stdout never blocks a request. */
export function createLogger(level: string): Logger {
  return pino(
    { level, base: { service: 'gateway' }, timestamp: pino.stdTimeFunctions.isoTime },
    pino.destination({ sync: false, minLength: 0 }),
  );
}

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;
const LOGGED_QUERY_PARAMETERS = new Set(['country', 'listing_type', 'property_type', 'limit']);

/**
 * The URL as logged: the path, and of the query only known parameter names with the values of the
 * filters. A cursor's value, and any unknown name or value (a key pasted as `?api_key=…` or as a
 * bare `?<key>`), is logged as `[redacted]`.
 */
export function loggableUrl(url: string): string {
  const q = url.indexOf('?');
  if (q < 0) return url.length > 512 ? `${url.slice(0, 512)}…` : url;
  const parts = url
    .slice(q + 1)
    .split('&')
    .slice(0, 20)
    .map((pair) => {
      const eq = pair.indexOf('=');
      const name = eq < 0 ? pair : pair.slice(0, eq);
      if (LOGGED_QUERY_PARAMETERS.has(name)) return pair.slice(0, 64);
      return name === 'cursor' ? 'cursor=[redacted]' : '[redacted]';
    });
  return `${url.slice(0, Math.min(q, 512))}?${parts.join('&')}`;
}

/**
 * One log line per answer, with the request id (the caller's `x-request-id` when well-formed, else
 * a new UUID; returned in the answer) and the key id. Headers are never logged, so neither is `x-api-key`.
 */
export function createHttpLogger(logger: Logger): HttpLogger {
  return pinoHttp({
    logger,
    quietReqLogger: true,
    genReqId(req: IncomingMessage, res: ServerResponse) {
      const given = req.headers['x-request-id'];
      const id = typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
      res.setHeader('X-Request-Id', id);
      return id;
    },
    customLogLevel: (_req, res, err) => (err || res.statusCode >= 500 ? 'error' : 'info'),
    customSuccessMessage: () => 'answered',
    customErrorMessage: () => 'answered',
    customAttributeKeys: { reqId: 'request_id', responseTime: 'ms' },
    customProps: (_req, res) => {
      const locals = (res as unknown as { locals?: Express.Locals }).locals;
      if (!locals) return {};
      return { ...(locals.key ? { key_id: locals.key.id } : {}), ...(locals.errorCode ? { error: locals.errorCode } : {}) };
    },
    serializers: {
      req: (req: { method: string; url: string; remoteAddress?: string }) => ({
        method: req.method,
        url: loggableUrl(req.url),
        remote: req.remoteAddress,
      }),
      res: (res: { statusCode: number }) => ({ status: res.statusCode }),
    },
  });
}
