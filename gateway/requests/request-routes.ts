import { Router, type Request } from 'express';
import { listQuery } from '../http/list-query';
import { currentActor } from '../audit/actor';
import { permit } from '../operators/require-role';
import { sendJson } from '../send';
import { queryParams } from '../http/query-params';
import { PAGE } from '../http/page-bound';
import type { RequestStore } from './request-store';
import { checkStatus, requestView, unknownRequest } from './subscription-request';

/** `?status=&limit=&cursor=`, each at most once; anything else 400 naming it. */
function requestQuery(url: string): { status?: string; limit?: number; cursor?: string } {
  const at = url.indexOf('?');
  const { status } = queryParams(at < 0 ? '' : url.slice(at + 1), ['status', 'limit', 'cursor']);
  const rest = new URLSearchParams(at < 0 ? '' : url.slice(at + 1));
  rest.delete('status');
  return { ...listQuery(`?${rest.toString()}`), ...(status !== undefined ? { status } : {}) };
}

/**
 * `/admin/requests` (docs/portal.md): the holders' subscription requests, newest first, any
 * operator may read; approving or declining needs `operator`. A second decision is 409 `conflict`.
 */
export function createRequestRoutes(requests: RequestStore): Router {
  const router = Router({ caseSensitive: true, strict: true });
  router.get('/admin/requests', async (req, res) => {
    const q = requestQuery(req.url);
    const status = checkStatus(q.status);
    const page = await requests.list({ limit: q.limit ?? PAGE.default, ...(status ? { status } : {}), ...(q.cursor !== undefined ? { cursor: q.cursor } : {}) });
    sendJson(res, 200, { requests: page.requests.map(requestView), next_cursor: page.nextCursor });
  });
  router.get('/admin/requests/:id', async (req, res) => {
    const found = await requests.get(req.params.id as string);
    if (!found) throw unknownRequest(req.params.id as string);
    sendJson(res, 200, requestView(found));
  });
  for (const [path, outcome] of [['approve', 'approved'], ['decline', 'declined']] as const) {
    router.post(`/admin/requests/:id/${path}`, permit('manage'), async (req: Request, res) => {
      sendJson(res, 200, requestView(await requests.decide(req.params.id as string, outcome, currentActor().name)));
    });
  }
  return router;
}

export const REQUEST_PATHS: Readonly<Record<string, string>> = {
  '/admin/requests': 'GET',
  '/admin/requests/:id': 'GET',
  '/admin/requests/:id/approve': 'POST',
  '/admin/requests/:id/decline': 'POST',
};
