import { Router } from 'express';
import { ApiError } from '../errors';
import { permit } from '../operators/require-role';
import { listQuery } from '../http/list-query';
import { sendJson } from '../send';
import type { DeadLetter, WebhookQueue } from './webhook-queue';

/** Page size of the dead letters (CONTRACT part 7: lists take `limit` 1..1000). */
const DEAD_PAGE = { default: 100, max: 1000 } as const;

/** Where a dead letter sorts: oldest failure first, then by id (ids are unique). */
const sortKey = (d: DeadLetter): string => `${d.failed_at}\u0000${d.id}`;

/**
 * One page of dead letters after `cursor` (the sort key of the previous page's last letter,
 * base64url): `next_cursor` while more follow, else null. Letters re-sent or added between two pages
 * neither repeat nor shift the walk, since the cursor names a place in the order, not an index.
 */
export function deadLetterPage(all: readonly DeadLetter[], options: { limit?: number; cursor?: string }): { events: DeadLetter[]; next_cursor: string | null } {
  const limit = options.limit ?? DEAD_PAGE.default;
  if (limit < 1 || limit > DEAD_PAGE.max) throw new ApiError('invalid_parameter', { parameter: 'limit' }, undefined, `limit: must be a whole number from 1 to ${DEAD_PAGE.max}`);
  let after: string | undefined;
  if (options.cursor !== undefined) {
    after = Buffer.from(options.cursor, 'base64url').toString('utf8');
    if (!after.includes('\u0000') || Buffer.from(after, 'utf8').toString('base64url') !== options.cursor) {
      throw new ApiError('invalid_parameter', { parameter: 'cursor' }, undefined, 'cursor: not a cursor this API gave (pass next_cursor back unchanged)');
    }
  }
  const sorted = [...all].sort((a, b) => (sortKey(a) < sortKey(b) ? -1 : sortKey(a) > sortKey(b) ? 1 : 0));
  const from = after === undefined ? 0 : sorted.findIndex((d) => sortKey(d) > after!);
  const events = from < 0 ? [] : sorted.slice(from, from + limit);
  const more = from >= 0 && from + limit < sorted.length;
  return { events, next_cursor: more ? Buffer.from(sortKey(events[events.length - 1]!), 'utf8').toString('base64url') : null };
}

/**
 * The admin API's dead letters: list them (any operator), re-send one (role `operator` or `admin`):
 * back to the queue, with a fresh 24 h of retries.
 */
export function createWebhookRoutes(queue: Pick<WebhookQueue, 'deadLetters' | 'resend'>): Router {
  const router = Router({ caseSensitive: true, strict: true });
  router.get('/admin/webhooks/dead', async (req, res) => sendJson(res, 200, deadLetterPage(await queue.deadLetters(), listQuery(req.url))));
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
