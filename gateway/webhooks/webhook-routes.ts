import { Router } from 'express';
import { ApiError } from '../errors';
import { sendJson } from '../send';
import type { WebhookQueue } from './webhook-queue';

/** The admin API's dead letters: list them, re-send one (back to the queue, a fresh 24 h of retries). */
export function createWebhookRoutes(queue: Pick<WebhookQueue, 'deadLetters' | 'resend'>): Router {
  const router = Router({ caseSensitive: true, strict: true });
  router.get('/admin/webhooks/dead', async (_req, res) => sendJson(res, 200, { events: await queue.deadLetters() }));
  router.post('/admin/webhooks/dead/:id/resend', async (req, res) => {
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
