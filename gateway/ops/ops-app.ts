// gateway/ops/: the ops listener: /metrics (prom-client, plain-number tallies folded in when read), health
// and readiness.
import type { ErrorRequestHandler, Express } from 'express';
import { createExpressApp } from '../http/express-app';
import type { Logger } from 'pino';
import { ApiError } from '../errors';
import { sendError, sendJson } from '../send';

/**
 * What the ops listener serves: a single process's own metrics and readiness, or, in the primary of
 * `GATEWAY_WORKERS` > 1, the sum and the summary of its workers' (gateway/workers/primary-ops.ts).
 */
export interface OpsSources {
  /** `/readyz`: answered 200 when `ready`, else 503; the object is the body. */
  readiness(): Promise<{ readonly ready: boolean }>;
  /** `/metrics`: the Prometheus text. A rejection with an ApiError is answered as that error, any other as 500. */
  metrics(): Promise<string>;
  readonly metricsContentType: string;
}

/**
 * The operations listener (OPS_PORT, loopback by default), never on the public port:
 * `/metrics` (Prometheus), `/healthz` (the process answers), `/readyz` (200 while this instance can
 * answer, 503 while starting, draining or refused; the body names each dependency's state).
 */
export function createOpsApp(sources: OpsSources, logger: Logger): Express {
  const app = createExpressApp();
  app.get('/healthz', (_req, res) => sendJson(res, 200, { status: 'ok' }));
  app.get('/readyz', async (_req, res) => {
    const state = await sources.readiness();
    res.setHeader('Cache-Control', 'no-store');
    sendJson(res, state.ready ? 200 : 503, state);
  });
  app.get('/metrics', async (_req, res) => {
    const text = await sources.metrics();
    res.setHeader('Content-Type', sources.metricsContentType);
    res.end(text);
  });
  app.all(['/healthz', '/readyz', '/metrics'], () => {
    throw new ApiError('method_not_allowed');
  });
  app.use(() => {
    throw new ApiError('not_found');
  });
  app.use(((err, req, res, _next) => {
    // An answer 500 says nothing to whoever scrapes: the cause goes to the log (serialised without
    // any Redis command, logging.ts). Ops paths carry no key, so the path is logged as it is.
    if (!(err instanceof ApiError)) logger.error({ err, path: req.path }, 'ops request failed');
    sendError(res, err instanceof ApiError ? err : new ApiError('internal_error'));
  }) as ErrorRequestHandler);
  return app;
}
