/**
 * gateway_webhook_backlog's source (WebhookQueue.backlog) on the in-memory queue: events queued
 * before delivery starts, waiting for a retry after a failure, and given up.
 */
import { createMemoryWebhookQueue } from '../../gateway/webhooks/memory-webhook-queue';
import { newEvent } from '../../gateway/webhooks/webhook-event';

test('the backlog counts queued, retrying and dead events', async () => {
  let t = 1_000_000;
  const queue = createMemoryWebhookQueue({ retryBaseMs: 1000, retryMaxMs: 1000, giveUpAfterMs: 1500, concurrency: 4, pollMs: 60_000 }, undefined, () => t);
  await queue.enqueue(newEvent('key.created', { key_id: 'a' }));
  await queue.enqueue(newEvent('key.created', { key_id: 'b' }));
  expect(await queue.backlog()).toEqual({ queued: 2, retrying: 0, dead: 0 });

  // Every attempt fails: both wait for their retry, due in 1 s.
  queue.startDelivery(async () => ({ ok: false, error: 'status 503' }));
  await new Promise((r) => setImmediate(r));
  expect(await queue.backlog()).toEqual({ queued: 0, retrying: 2, dead: 0 });

  // 2 s later both are due, fail again, and give up (past 1.5 s since queued).
  t += 2000;
  await queue.enqueue(newEvent('key.created', { key_id: 'c' })); // pumps the queue
  await new Promise((r) => setImmediate(r));
  expect(await queue.backlog()).toEqual({ queued: 0, retrying: 1, dead: 2 });
  await queue.close();
});
