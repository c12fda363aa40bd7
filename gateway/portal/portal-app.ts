// gateway/portal/: the key holders' portal (PORTAL_PORT): sign-in (OpenID Connect, one-time links), sessions,
// Origin and CSRF checks, the holder's views and changes; pages/ holds its HTML.
import { invalidParameter } from '../http/invalid-parameter';
import express, { type Express, type NextFunction, type Request, type Response } from 'express';
import type { Logger } from 'pino';
import { operatorError } from '../http/operator-error';
import { pageHeaders, sendPage } from '../http/page-headers';
import { CSS, serveStaticAssets } from '../http/static-assets';
import { ApiError } from '../errors';
import { sameOrigin } from './origin-check';
import { messagePage, type PortalContext } from './pages/layout';
import { createAuthRouter, type AuthDeps } from './portal-auth';
import type { HolderDeps } from './holder-context';
import { createHolderRouter } from './holder-routes';
import { FieldProblem } from './form-input';

/**
 * The portal's Content-Security-Policy: no script at all, styles and images only from here, forms
 * post only here, never framed.
 */
export const PORTAL_CSP = "default-src 'none'; script-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

export type PortalDeps = AuthDeps & HolderDeps & { logger: Logger; trustedProxies: readonly string[] };

/**
 * The key holders' portal (docs/portal.md) on its own listener: server-rendered pages under
 * `/portal`, no script, post-redirect-get. Every POST passes the Origin check (origin-check.ts);
 * every POST after sign-in carries the session's CSRF token too (holder-routes.ts).
 */
export function createPortalApp(d: PortalDeps): Express {
  const app = express();
  app.disable('x-powered-by');
  app.disable('etag');
  app.set('query parser', false);
  // The failed sign-in budget counts per client address: behind a proxy only a trusted one's word is taken.
  app.set('trust proxy', d.trustedProxies.length ? [...d.trustedProxies] : false);

  app.use(pageHeaders(PORTAL_CSP));
  // The two stylesheets: the console's (shared, not copied) and the portal's additions.
  app.get('/portal/assets/:name', serveStaticAssets({
    'console.css': { file: 'gateway/console/assets/console.css', type: CSS },
    'portal.css': { file: 'gateway/portal/assets/portal.css', type: CSS },
  }));
  app.get(['/', '/portal', '/portal/'], (_req, res) => res.redirect(303, '/portal/keys'));
  // Every change, signed in or not, comes from a page of this portal (Origin, else Referer).
  app.post('/portal/{*rest}', sameOrigin(d.publicUrl));
  app.use('/portal', createAuthRouter(d));
  app.use('/portal', createHolderRouter(d));
  app.use(() => {
    throw new ApiError('not_found');
  });
  app.use(function portalError(err: unknown, _req: Request, res: Response, _next: NextFunction) {
    const ctx = (res.locals.portalCtx as PortalContext | undefined) ?? {};
    if (err instanceof FieldProblem) err = invalidParameter(err.field, err.message);
    const answer = operatorError(err, d.logger, { bodyMessage: 'The form could not be read (at most 16 KB and 20 fields, UTF-8, not compressed).', failed: 'portal request failed' });
    if (answer.retryAfterSeconds !== undefined) res.set('Retry-After', String(answer.retryAfterSeconds));
    const title = answer.status === 404 ? 'Not found' : answer.status >= 500 ? 'Not available' : 'Not done';
    sendPage(res, answer.status, messagePage(ctx, title, answer.status === 404 ? 'There is no such page, or no such key in your account.' : answer.message, 'error', ctx.holder ? { href: '/portal/keys', text: 'Your keys' } : { href: '/portal/sign-in', text: 'Sign in' }));
  } as express.ErrorRequestHandler);
  return app;
}
