// gateway/console/: the operator console: sign-in and sessions, CSRF, forms, assets, the stores it reads (Redis
// or the keys file); routes/ holds its routers, pages/ its HTML pages.
import express, { type NextFunction, type Request, type Response, type Router } from 'express';
import type { Logger } from 'pino';
import { ApiError } from '../errors';
import { operatorError } from '../http/operator-error';
import { pageHeaders } from '../http/page-headers';
import { CSS, JAVASCRIPT, serveStaticAssets } from '../http/static-assets';
import { createGuessBudget, type GuessBudget } from '../operators/guess-budget';
import { tokenDigest, type OperatorRegistry } from '../operators/operator-tokens';
import { tooManyGuesses } from '../operators/require-role';
import type { ConsoleStore } from './console-store';
import { requireCsrf, sameOrigin } from './csrf';
import { sendPage } from '../http/page-headers';
import { field, formBody } from './forms';
import { createHolderConsoleRoutes, type HolderConsole } from './holder-routes';
import { errorPage } from './pages/error-page';
import { signInPage } from './pages/sign-in';
import { addKeyRoutes } from './routes/key-routes';
import { addRecordRoutes } from './routes/record-routes';
import type { SessionStore } from './sessions';
import { requireSession, sessionCookie, signed } from './signed-in';

export { SESSION_COOKIE } from './signed-in';

/**
 * The console's Content-Security-Policy: scripts, styles and everything else only from this
 * listener, no inline script or style, forms post only here, never framed.
 */
export const CONSOLE_CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

export interface ConsoleOptions {
  store: ConsoleStore;
  operators: OperatorRegistry;
  sessions: SessionStore;
  sessionTtlMs: number;
  logger: Logger;
  /** Failed sign-ins per address (default: 10 a minute, gateway/operators/guess-budget.ts). */
  guesses?: GuessBudget;
  /** The holders' pages (accounts, requests), when the gateway has the stores. */
  holders?: HolderConsole;
}

/**
 * The operator console (`/console` on the admin listener): server-rendered pages over the same key
 * admin as the admin API, so roles, validation and the audit log are the same. Sign-in with an
 * operator token makes a session (cookie: HttpOnly, SameSite=Strict, Path=/console, expiring);
 * every form carries the session's CSRF token; every change runs as the operator, channel `console`.
 */
export function createConsoleRouter(o: ConsoleOptions): Router {
  const router = express.Router({ caseSensitive: true });

  router.use(pageHeaders(CONSOLE_CSP));
  // The console's only static files (no inline script or style: the CSP allows neither).
  router.get('/assets/:name', serveStaticAssets({
    'console.css': { file: 'gateway/console/assets/console.css', type: CSS },
    'console.js': { file: 'gateway/console/assets/console.js', type: JAVASCRIPT },
  }));

  router.get('/sign-in', (_req, res) => sendPage(res, 200, signInPage()));
  const guesses = o.guesses ?? createGuessBudget();
  router.post('/sign-in', sameOrigin, (req, _res, next) => {
    // Before the form is read: an address past its guesses is refused whatever it sends.
    const wait = guesses.waitFor(req.socket.remoteAddress ?? '');
    if (wait !== undefined) throw tooManyGuesses(wait);
    next();
  }, formBody, (req, res) => {
    const ip = req.socket.remoteAddress ?? '';
    const token = field(req, 'token');
    const operator = o.operators.authenticate(token);
    if (!operator) {
      o.logger.warn({ channel: 'console', ip }, 'console sign-in refused: unknown token');
      if (token !== '' && guesses.failed(ip)) o.logger.warn({ channel: 'console', ip }, 'console sign-in: too many failures from this address; refused for the rest of the minute');
      return sendPage(res, 401, signInPage('That token is not recognised.'));
    }
    const session = o.sessions.create(operator.name, tokenDigest(token));
    res.setHeader('Set-Cookie', sessionCookie(session.id, Math.floor(o.sessionTtlMs / 1000)));
    o.logger.info({ operator: operator.name, role: operator.role }, 'console sign-in');
    res.redirect(303, '/console/keys');
  });

  router.use(requireSession(o.sessions, o.operators));
  router.post('/{*rest}', sameOrigin, formBody, requireCsrf((res) => signed(res).session));
  router.post('/sign-out', (_req, res) => {
    o.sessions.end(signed(res).session.id);
    res.setHeader('Set-Cookie', sessionCookie('', 0));
    res.redirect(303, '/console/sign-in');
  });
  router.get('/', (_req, res) => res.redirect(303, '/console/keys'));
  addKeyRoutes(router, o.store);
  addRecordRoutes(router, o.store);
  if (o.holders) router.use(createHolderConsoleRoutes(o.holders, o.store));

  router.use(() => {
    throw new ApiError('not_found');
  });
  router.use(function consoleError(err: unknown, _req: Request, res: Response, _next: NextFunction) {
    const ctx = res.locals.console?.ctx ?? {};
    // The admin API's own mapping (Redis away: 503; a form or path that cannot be read: 4xx), as a page.
    const answer = operatorError(err, o.logger, { bodyMessage: 'The form could not be read (at most 16 KB and 50 fields, UTF-8, not compressed).', failed: 'console request failed' });
    if (answer.retryAfterSeconds !== undefined) res.set('Retry-After', String(answer.retryAfterSeconds));
    sendPage(res, answer.status, errorPage(ctx, answer.code, answer.message));
  } as express.ErrorRequestHandler);
  return router;
}
