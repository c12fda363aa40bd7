import { Router, type Request } from 'express';
import { listQuery } from '../http/list-query';
import { operatorOf, permit } from '../operators/require-role';
import { allows } from '../operators/roles';
import { sendJson } from '../send';
import { accountInputFromJson, accountPatchFromJson, accountView, unknownAccount } from './account';
import { PAGE } from '../http/page-bound';
import type { AccountStore } from './account-store';

const body = (req: Request): Record<string, unknown> =>
  typeof req.body === 'object' && req.body !== null && !Array.isArray(req.body) ? (req.body as Record<string, unknown>) : {};

/**
 * `/admin/accounts`: list (paged, by id) and read for any operator, change for `operator` (adding
 * an email for `admin`), create and delete for `admin` (as for keys: they decide who a key belongs to). One
 * account's answer adds `key_ids`, the keys that name it.
 */
export function createAccountRoutes(accounts: AccountStore): Router {
  const router = Router({ caseSensitive: true, strict: true });
  const id = (req: Request): string => req.params.id as string;
  router.get('/admin/accounts', async (req, res) => {
    const q = listQuery(req.url);
    const page = await accounts.list({ limit: q.limit ?? PAGE.default, ...(q.cursor !== undefined ? { cursor: q.cursor } : {}) });
    sendJson(res, 200, { accounts: page.accounts.map(accountView), next_cursor: page.nextCursor });
  });
  router.post('/admin/accounts', permit('issue'), async (req, res) => sendJson(res, 201, accountView(await accounts.create(accountInputFromJson(body(req))))));
  router.get('/admin/accounts/:id', async (req, res) => {
    const account = await accounts.get(id(req));
    if (!account) throw unknownAccount(id(req));
    sendJson(res, 200, { ...accountView(account), key_ids: await accounts.keyIdsOf(account.id) });
  });
  // Adding an email hands the account's keys to its holder: the issuing role's (gateway/keys/change-role.ts).
  router.patch('/admin/accounts/:id', permit('manage'), async (req, res) =>
    sendJson(res, 200, accountView(await accounts.update(id(req), accountPatchFromJson(body(req)), { issue: allows(operatorOf(res).role, 'issue') }))));
  router.delete('/admin/accounts/:id', permit('issue'), async (req, res) => {
    await accounts.delete(id(req));
    res.statusCode = 204;
    res.end();
  });
  return router;
}

export const ACCOUNT_PATHS: Readonly<Record<string, string>> = {
  '/admin/accounts': 'GET, POST',
  '/admin/accounts/:id': 'GET, PATCH, DELETE',
};
