import type { RedisClient as Redis } from '../redis/connect';
import type { Logger } from 'pino';
import { createDeliverer } from './deliver';
import { createMemoryWebhookQueue } from './memory-webhook-queue';
import { createQuotaWatcher, type QuotaWatcher } from './quota-thresholds';
import { createRedisWebhookQueue } from './redis-webhook-queue';
import { createSigner } from './signer';
import type { DeadLetterBounds, WebhookQueue } from './webhook-queue';

export interface WebhookSettings {
  readonly url: string;
  readonly secret: string;
  readonly timeoutMs: number;
  readonly retryBaseMs: number;
  readonly retryMaxMs: number;
  readonly giveUpAfterMs: number;
  readonly concurrency: number;
  readonly pollMs: number;
  readonly thresholds: readonly number[];
  /** Dead letters kept (default DEFAULT_DEAD_LETTER_BOUNDS). */
  readonly deadLetters?: DeadLetterBounds;
}

export interface Webhooks {
  readonly queue: WebhookQueue;
  readonly watcher: QuotaWatcher;
  close(): Promise<void>;
}

/**
 * Turns delivery on: the queue (Redis when there is one: `commands` for the queue's commands and
 * `waiting` for the blocking read; else memory), the signer, the HTTP deliverer, and the quota
 * watcher that feeds the queue. A delivery in flight longer than twice the timeout plus 2 s
 * belongs to an instance that died, and is taken over.
 */
export function startWebhooks(s: WebhookSettings, logger: Logger, redis?: { commands: Redis; waiting: Redis }): Webhooks {
  const options = { retryBaseMs: s.retryBaseMs, retryMaxMs: s.retryMaxMs, giveUpAfterMs: s.giveUpAfterMs, concurrency: s.concurrency, pollMs: s.pollMs, ...(s.deadLetters ? { deadLetters: s.deadLetters } : {}) };
  const queue = redis
    ? createRedisWebhookQueue(redis.commands, { ...options, reclaimIdleMs: 2 * s.timeoutMs + 2_000 }, logger, redis.waiting)
    : createMemoryWebhookQueue(options, logger);
  const sign = createSigner(s.secret);
  const deliverer = createDeliverer(s.url, s.timeoutMs, s.concurrency);
  queue.startDelivery((event) => deliverer.deliver(sign(event)));
  const watcher = createQuotaWatcher(s.thresholds, (onceKey, until, event) => queue.enqueueOnce(onceKey, until, event), (err) =>
    logger.warn({ err: (err as Error)?.message }, 'quota threshold crossed, but its webhook event could not be queued'),
  );
  logger.info({ store: redis ? 'redis' : 'memory', thresholds: s.thresholds }, 'webhooks on');
  return {
    queue,
    watcher,
    async close() {
      await queue.close();
      await deliverer.close();
    },
  };
}
