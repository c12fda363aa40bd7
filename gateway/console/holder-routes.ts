import express, { type NextFunction, type Request, type Response, type Router } from 'express';
import { accountView } from '../accounts/account';
import type { AccountStore } from '../accounts/account-store';
import { currentActor } from '../audit/actor';
import { ApiError } from '../errors';
import type { KeyView } from '../keys/key-admin';
import { allows, type Permission, type Role } from '../operators/roles';
import type { RequestStore } from '../requests/request-store';
import { checkStatus, requestView } from '../requests/subscription-request';
import type { ConsoleStore } from './console-store';
import { accountPage, accountsListPage } from './pages/accounts-page';
import type { PageContext } from './pages/layout';
import { changeText, requestsPage } from './pages/requests-page';

/** The holders' stores the console shows: accounts, and requests where they can be made (Redis). */
export interface HolderConsole {
  readonly accounts: AccountStore;
  readonly requests?: RequestStore;
}

const PAGE = 100;
const signedIn = (res: Response): { ctx: PageContext; role: Role } => res.locals.console as { ctx: PageContext; role: Role };
const need = (permission: Permission) => (_req: Request, res: Response, next: NextFunction): void => {
  const { role } = signedIn(res);
  if (!allows(role, permission)) throw new ApiError('forbidden', {}, undefined, `The role "${role}" cannot do this.`);
  next();
};
const send = (res: Response, page: string): void => void res.status(200).type('text/html; charset=utf-8').send(page);
const queryOf = (req: Request): URLSearchParams => new URL(req.originalUrl, 'http://console').searchParams;

/**
 * The console's pages about holders, mounted inside the console router (after its session, CSRF
 * and origin checks, so every post here is checked as every console form is, and runs as the
 * operator): `/accounts`, `/accounts/{id}` with its keys and requests, and `/requests` with
 * approve and decline (role `operator`, post-redirect-get).
 */
export function createHolderConsoleRoutes(h: HolderConsole, keys: Pick<ConsoleStore, 'show'>): Router {
  const router = express.Router({ caseSensitive: true });
  router.get('/accounts', need('read'), async (req, res) => {
    const cursor = queryOf(req).get('cursor') ?? undefined;
    const page = await h.accounts.list({ limit: PAGE, ...(cursor ? { cursor } : {}) });
    const rows = await Promise.all(page.accounts.map(async (a) => ({ account: accountView(a), keyCount: (await h.accounts.keyIdsOf(a.id)).length })));
    send(res, accountsListPage(signedIn(res).ctx, { rows, nextCursor: page.nextCursor, readOnly: !h.accounts.writable }));
  });
  router.get('/accounts/:id', need('read'), async (req, res) => {
    const id = req.params.id as string;
    const account = await h.accounts.get(id);
    if (!account) throw new ApiError('not_found', {}, undefined, `No account with id "${id}".`);
    const ids = await h.accounts.keyIdsOf(id);
    const shown = await Promise.all(ids.map((k) => keys.show(k).catch(() => undefined)));
    const requests = h.requests ? (await h.requests.list({ accountId: id, limit: PAGE })).requests.map(requestView) : [];
    send(res, accountPage(signedIn(res).ctx, {
      account: accountView(account),
      keys: shown.filter((k): k is KeyView => k !== undefined),
      requests: requests.map((r) => ({ id: r.id, key_id: r.key_id, change: changeText(r.change), status: r.status, created_at: r.created_at })),
    }));
  });
  const requests = (): RequestStore => {
    if (!h.requests) throw new ApiError('not_found', {}, undefined, 'Subscription requests need the Redis key store.');
    return h.requests;
  };
  router.get('/requests', need('read'), async (req, res) => {
    const q = queryOf(req);
    const status = checkStatus(q.has('status') ? q.get('status') || undefined : 'pending');
    const cursor = q.get('cursor') || undefined;
    const page = await requests().list({ limit: PAGE, ...(status ? { status } : {}), ...(cursor ? { cursor } : {}) });
    const { ctx, role } = signedIn(res);
    const done = q.get('done') ?? undefined;
    send(res, requestsPage(ctx, { requests: page.requests.map(requestView), status: status ?? '', nextCursor: page.nextCursor, canDecide: allows(role, 'manage'), ...(done ? { done } : {}) }));
  });
  for (const [action, outcome] of [['approve', 'approved'], ['decline', 'declined']] as const) {
    router.post(`/requests/:id/${action}`, need('manage'), async (req, res) => {
      await requests().decide(req.params.id as string, outcome, currentActor().name);
      res.redirect(303, `/console/requests?done=${outcome}`);
    });
  }
  return router;
}
