import { Router } from 'express';
import { ApiError } from '../errors';
import { permit } from '../operators/require-role';
import { listQuery } from '../http/list-query';
import { sendJson } from '../send';
import type { WebhookQueue } from './webhook-queue';

/**
 * The admin API's dead letters: list them (any operator), re-send one (role `operator` or `admin`):
 * back to the queue, with a fresh 24 h of retries.
 */
export function createWebhookRoutes(queue: Pick<WebhookQueue, 'deadLetterPage' | 'resend'>): Router {
  const router = Router({ caseSensitive: true, strict: true });
  router.get('/admin/webhooks/dead', async (req, res) => sendJson(res, 200, await queue.deadLetterPage(listQuery(req.url))));
  // Re-sending changes what the receiver gets: an operator's act, not a viewer's.
  router.post('/admin/webhooks/dead/:id/resend', permit('manage'), async (req, res) => {
    const id = req.params.id as string;
    if (!(await queue.resend(id))) throw new ApiError('not_found', {}, undefined, `No dead letter with id "${id}".`);
    sendJson(res, 202, { id, resent: true });
  });
  return router;
}

export const WEBHOOK_PATHS: Readonly<Record<string, string>> = {
  '/admin/webhooks/dead': 'GET',
  '/admin/webhooks/dead/:id/resend': 'POST',
};
