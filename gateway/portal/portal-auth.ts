import { randomBytes } from 'node:crypto';
import express, { type Request, type Response, type Router } from 'express';
import type { Logger } from 'pino';
import type { AccountStore } from '../accounts/account-store';
import type { LinkTokens } from '../accounts/link-tokens';
import { ApiError } from '../errors';
import { CALLBACK_PATH, type OidcSignIn } from './oidc';
import { messagePage } from './pages/layout';
import { BAD_LINK_MESSAGE, linkPage, NO_ACCOUNT_MESSAGE, signInPage, tooManyPage } from './pages/sign-in-pages';
import { PENDING_LOGIN_MS, type PendingLogins } from './pending-logins';
import { clientAddress, cookieJar, PENDING_COOKIE, SESSION_COOKIE } from './portal-cookies';
import { SESSION_ABSOLUTE_MS, type PortalSessionStore } from './portal-sessions';
import type { SignInBudget } from './sign-in-budget';
import type { LoginStartBudget } from './login-start-budget';
import { readForm, formField } from './form-input';

export interface AuthDeps {
  publicUrl: string;
  secureCookies: boolean;
  accounts: AccountStore;
  links: LinkTokens;
  sessions: PortalSessionStore;
  pending: PendingLogins;
  budget: SignInBudget;
  /** Starting an OpenID sign-in stores it for 10 minutes: budgeted per address and overall. */
  loginStarts: LoginStartBudget;
  oidc?: OidcSignIn;
  logger: Logger;
}

const send = (res: Response, status: number, page: string): void => {
  res.status(status).type('text/html; charset=utf-8').send(page);
};

/**
 * Signing in: OpenID Connect (`/portal/login` → the provider → `/portal/callback`) and one-time
 * links (`/portal/link/<token>` shows a button; its POST redeems the token once, on any instance).
 * A wrong or used link and a refused callback count against the caller's address (sign-in-budget.ts).
 */
export function createAuthRouter(d: AuthDeps): Router {
  const router = express.Router({ caseSensitive: true, strict: true });
  const jar = cookieJar(d.secureCookies);
  // The attempt was counted when it started (overBudget): a failure leaves it counted.
  const signInFailed = async (req: Request, res: Response, status: number, message: string, why: string): Promise<void> => {
    d.logger.warn({ channel: 'portal', address: clientAddress(req), why }, 'portal sign-in refused');
    send(res, status, signInPage({ oidc: !!d.oidc, message }));
  };
  /** Counts the attempt; refused for the rest of the minute once the address has failed too often. */
  const overBudget = async (req: Request, res: Response): Promise<boolean> => {
    if (await d.budget.take(clientAddress(req))) return false;
    const seconds = d.budget.retryAfterSeconds();
    res.set('Retry-After', String(seconds));
    send(res, 429, tooManyPage(seconds));
    return true;
  };
  /** A new session id at every sign-in; the session this browser held before (if any) ends. */
  const startSession = async (req: Request, res: Response, accountId: string, email: string | null): Promise<void> => {
    await d.budget.giveBack(clientAddress(req)); // only failures count
    const previous = jar.read(req, SESSION_COOKIE);
    if (previous) await d.sessions.end(previous);
    const session = await d.sessions.create(accountId, email);
    jar.set(res, SESSION_COOKIE, session.id, '/portal', Math.floor(SESSION_ABSOLUTE_MS / 1000));
    d.logger.info({ channel: 'portal', account: accountId, by: email ?? 'link' }, 'portal sign-in');
    res.redirect(303, '/portal/keys');
  };

  router.get('/sign-in', (_req, res) => send(res, 200, signInPage({ oidc: !!d.oidc })));

  router.get('/link/:token', (req, res) => send(res, 200, linkPage(req.params.token as string)));
  router.post('/link', readForm, async (req, res) => {
    if (await overBudget(req, res)) return;
    const accountId = await d.links.redeem(formField(req, 'token'));
    const account = accountId ? await d.accounts.get(accountId) : undefined;
    if (!account) return signInFailed(req, res, 400, BAD_LINK_MESSAGE, 'link');
    await startSession(req, res, account.id, null);
  });

  router.get('/login', async (req, res) => {
    if (!d.oidc) throw new ApiError('not_found');
    if (!(await d.loginStarts.take(clientAddress(req)))) {
      const seconds = d.loginStarts.retryAfterSeconds();
      d.logger.warn({ channel: 'portal', address: clientAddress(req), why: 'sign-in starts over budget' }, 'portal sign-in refused');
      res.set('Retry-After', String(seconds));
      return send(res, 429, tooManyPage(seconds, 'sign-ins started from your address (or from everyone)'));
    }
    const { url, pending } = await d.oidc.begin();
    const id = randomBytes(32).toString('base64url');
    await d.pending.put(id, pending);
    jar.set(res, PENDING_COOKIE, id, CALLBACK_PATH, Math.floor(PENDING_LOGIN_MS / 1000));
    res.redirect(303, url);
  });
  router.get('/callback', async (req, res) => {
    if (!d.oidc) throw new ApiError('not_found');
    if (await overBudget(req, res)) return;
    const id = jar.read(req, PENDING_COOKIE);
    jar.clear(res, PENDING_COOKIE, CALLBACK_PATH);
    const pending = id ? await d.pending.take(id) : undefined;
    if (!pending) return signInFailed(req, res, 400, 'This sign-in was not started here, or it took too long. Start again.', 'no pending sign-in');
    let identity;
    try {
      identity = await d.oidc.finish(new URL(req.originalUrl, d.publicUrl), pending);
    } catch (err) {
      d.logger.warn({ err: (err as Error).message }, 'portal callback refused by the OpenID checks');
      return signInFailed(req, res, 400, 'The identity provider\'s answer was refused (it did not match this sign-in). Start again.', 'callback checks');
    }
    const account = identity?.emailVerified ? await d.accounts.findByEmail(identity.email) : undefined;
    if (!identity || !account) {
      d.logger.warn({ channel: 'portal', why: identity ? 'no account for this verified email' : 'no email claim' }, 'portal sign-in refused');
      return send(res, 403, messagePage({}, 'No account', NO_ACCOUNT_MESSAGE, 'error', { href: '/portal/sign-in', text: 'Back to sign-in' }));
    }
    await startSession(req, res, account.id, identity.email);
  });
  return router;
}
