import express, { type NextFunction, type Request, type Response, type Router } from 'express';
import { runAs } from '../audit/actor';
import { ApiError } from '../errors';
import { csrfOf, readForm } from './form-input';
import { holderChanges, holderKey } from './holder-view';
import { addHolderActions } from './holder-actions';
import type { FormProblem } from './pages/change-forms';
import { keysPage, requestsPage, revokePage } from './pages/holder-pages';
import { keyPage } from './pages/key-page';
import type { PortalContext } from './pages/layout';
import { holderOf, type Holder, type HolderDeps } from './holder-context';
import { cookieJar, SESSION_COOKIE } from './portal-cookies';
import { csrfMatches } from './portal-sessions';

const HISTORY_DAYS = 30;
const CHANGES_SHOWN = 50;
const REQUESTS_SHOWN = 100;

/**
 * The holder's pages. Every request needs a live session whose account still exists and still holds
 * the email it signed in with; every change carries the session's CSRF token and runs as
 * `holder:<account>:<email|link>` through channel `portal`, so the key admin audits it and sends the
 * `key.*` webhook. A key id not in the session's account answers 404, whoever owns it.
 */
export function createHolderRouter(d: HolderDeps): Router {
  const router = express.Router({ caseSensitive: true, strict: true });
  const jar = cookieJar(d.secureCookies);

  router.use(async (req, res, next) => {
    const id = jar.read(req, SESSION_COOKIE);
    const session = id ? await d.sessions.get(id) : undefined;
    const account = session ? await d.accounts.get(session.accountId) : undefined;
    const stillHeld = !!account && (session!.email === null || account.emails.includes(session!.email));
    if (!session || !account || !stillHeld) {
      if (session) await d.sessions.end(session.id);
      if (id) jar.clear(res, SESSION_COOKIE, '/portal');
      if (req.method === 'GET') return res.redirect(303, '/portal/sign-in');
      throw new ApiError('unauthenticated', {}, undefined, 'Sign in first: there is no session, or it has ended. Nothing was changed.');
    }
    const ctx: PortalContext = { holder: { accountName: account.name, identity: session.email ?? 'one-time link' }, csrf: session.csrf };
    res.locals.holder = { session, account, ctx } satisfies Holder;
    res.locals.portalCtx = ctx;
    runAs({ name: `holder:${account.id}:${session.email ?? 'link'}`, channel: 'portal' }, next);
  });
  router.post('/{*rest}', readForm, (req, res, next) => {
    if (!csrfMatches(holderOf(res).session, csrfOf(req))) {
      throw new ApiError('forbidden', {}, undefined, 'The form is not from this session (missing or wrong CSRF token); nothing was changed. Reload the page and try again.');
    }
    next();
  });

  router.post('/sign-out', async (_req, res) => {
    await d.sessions.end(holderOf(res).session.id);
    jar.clear(res, SESSION_COOKIE, '/portal');
    res.redirect(303, '/portal/sign-in');
  });

  /** The account's key ids; any other id is 404 whoever owns it. */
  const owned = async (res: Response, id: string): Promise<void> => {
    if (!(await d.accounts.keyIdsOf(holderOf(res).account.id)).includes(id)) throw new ApiError('not_found');
  };
  const readOnly = (): string | undefined => (d.keys.admin ? undefined : `Read-only: keys come from ${d.keys.source}. Ask your provider for changes.`);

  /** A key's page; with a form problem, the form comes back (400) with the message beside the field. */
  const renderKey = async (req: Request, res: Response, problem?: FormProblem): Promise<void> => {
    const id = req.params.id as string;
    const h = holderOf(res);
    const [key, usage, audit, history, requests] = await Promise.all([
      d.keys.show(id), d.keys.usage(id), d.keys.readAudit({ keyId: id, limit: CHANGES_SHOWN }), d.keys.history?.(id, HISTORY_DAYS),
      d.requests ? d.requests.list({ accountId: h.account.id, keyId: id, limit: REQUESTS_SHOWN }) : undefined,
    ]);
    const done = problem ? undefined : new URL(req.originalUrl, 'http://portal').searchParams.get('done') ?? undefined;
    const ro = readOnly();
    res.status(problem ? 400 : 200).type('text/html; charset=utf-8').send(keyPage(h.ctx, {
      key: holderKey(key), usage, changes: holderChanges(audit.entries, h.account.id), requests: requests?.requests ?? [], policy: d.policy(),
      ...(history ? { history } : {}), ...(ro ? { readOnly: ro } : {}), ...(done ? { done } : {}), ...(problem ? { problem } : {}),
    }));
  };
  const ownKey = async (req: Request, res: Response, next: NextFunction): Promise<void> => {
    await owned(res, req.params.id as string);
    next();
  };

  router.get('/keys', async (_req, res) => {
    const h = holderOf(res);
    const ids = await d.accounts.keyIdsOf(h.account.id);
    const rows = await Promise.all(ids.map(async (id) => ({ key: holderKey(await d.keys.show(id)), usage: await d.keys.usage(id) })));
    res.type('text/html; charset=utf-8').send(keysPage(h.ctx, rows));
  });
  router.get('/keys/:id', ownKey, (req, res) => renderKey(req, res));
  router.get('/keys/:id/revoke', ownKey, async (req, res) => {
    if (!d.policy().revoke || readOnly()) throw new ApiError('not_found');
    res.type('text/html; charset=utf-8').send(revokePage(holderOf(res).ctx, req.params.id as string));
  });
  router.get('/requests', async (_req, res) => {
    const h = holderOf(res);
    const list = d.requests ? (await d.requests.list({ accountId: h.account.id, limit: REQUESTS_SHOWN })).requests : [];
    res.type('text/html; charset=utf-8').send(requestsPage(h.ctx, list));
  });
  addHolderActions(router, d, { ownKey, renderKey });
  return router;
}
