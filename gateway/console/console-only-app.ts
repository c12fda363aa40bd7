import type { Express, Router } from 'express';
import { createExpressApp } from '../http/express-app';
import { ApiError } from '../errors';
import { sendError } from '../send';

/**
 * The admin listener when keys come from the keys file: the console alone, read-only. The admin
 * API manages the Redis key store, so its paths are not served here (404 in its `{error, message}` form).
 */
export function createConsoleOnlyApp(consoleRouter: Router): Express {
  const app = createExpressApp();
  app.use('/console', consoleRouter);
  app.use((_req, res) => sendError(res, new ApiError('not_found', {}, undefined, 'The admin API needs the Redis key store (KEY_STORE=redis); with the keys file only the console is served, read-only.')));
  return app;
}
