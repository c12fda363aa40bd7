import type { ErrorRequestHandler, Express, Router } from 'express';
import type { Logger } from 'pino';
import { ApiError } from '../errors';
import { admitAdminWork } from '../http/admin-admission';
import { createExpressApp } from '../http/express-app';
import { checkHost } from '../http/host-check';
import { operatorError } from '../http/operator-error';
import { sendError } from '../send';

/**
 * The admin listener when keys come from the keys file: the console alone, read-only. The admin
 * API manages the Redis key store, so its paths are not served here (404 in its `{error, message}` form).
 * Host names are checked as on the admin API (gateway/http/host-check.ts).
 */
export function createConsoleOnlyApp(consoleRouter: Router, o: { allowedHosts?: readonly string[]; logger?: Logger } = {}): Express {
  const app = createExpressApp();
  app.use(checkHost(o.allowedHosts ?? []));
  app.use(admitAdminWork());
  app.use('/console', consoleRouter);
  app.use((_req, res) => sendError(res, new ApiError('not_found', {}, undefined, 'The admin API needs the Redis key store (KEY_STORE=redis); with the keys file only the console is served, read-only.')));
  app.use(((err, _req, res, _next) => {
    sendError(res, err instanceof ApiError || !o.logger ? (err instanceof ApiError ? err : new ApiError('internal_error')) : operatorError(err, o.logger, { bodyMessage: 'The request could not be read.', failed: 'admin request failed' }));
  }) as ErrorRequestHandler);
  return app;
}
