// gateway/http/: the admin side's HTTP layer: the express factory, query parameters, list paging and one page
// bound, id cursors, invalidParameter(), operator error answers, the Host check, the admission gate.
import express, { type Express } from 'express';

/**
 * An express app with the set-up every express listener of the gateway shares (admin, ops,
 * console-only, reference): no `X-Powered-By`, no ETag, exact routing (case and trailing slash), and
 * no query parser (each route reads its raw query through gateway/http/query-params.ts, refusing
 * unknown and repeated parameters).
 */
export function createExpressApp(): Express {
  const app = express();
  app.disable('x-powered-by');
  app.disable('etag');
  app.set('case sensitive routing', true);
  app.set('strict routing', true);
  app.set('query parser', false);
  return app;
}
