import type { RedisClient as Redis } from '../redis/connect';
import type { Logger } from 'pino';
import { createRedisDeadLetters, deadLetterKeys } from './redis-dead-letters';
import { RedisWebhookDelivery, type RedisQueueOptions } from './redis-webhook-delivery';
import { DEFAULT_DEAD_LETTER_BOUNDS, type WebhookQueue } from './webhook-queue';
import type { WebhookEvent } from './webhook-event';

/**
 * Redis layout of the webhook queue. One hash tag for all of it, so the scripts and transactions
 * below touch one slot and run unchanged on a cluster (events are rare: one slot is plenty).
 */
export const webhookKeys = {
  /** Events to deliver now: a stream read by the consumer group `deliverers`. */
  stream: 'lgw:{webhooks}:events',
  /** Failed events waiting for their next attempt: a sorted set scored by the time it is due. */
  retry: 'lgw:{webhooks}:retry',
  /** Events that gave up: a hash, id → dead letter (JSON), ordered by its index (redis-dead-letters.ts). */
  dead: deadLetterKeys.letters,
  deadIndex: deadLetterKeys.index,
  /** "Some instance delivers": set, with a TTL, by every instance with WEBHOOK_URL (the CLI emits key events only then). */
  on: 'lgw:{webhooks}:on',
  /** Exactly-once markers of quota thresholds. */
  once: (name: string) => `lgw:{webhooks}:once:${name}`,
} as const;
/** A safety bound on the stream; far above what events need (a few per key and day). */
const STREAM_MAXLEN = 1_000_000;

/** Queues the event unless the marker exists; marker and event in one atomic step. */
const ENQUEUE_ONCE = `
if redis.call('SET', KEYS[2], '1', 'NX', 'PXAT', ARGV[1]) then
  redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[4], '*', 'event', ARGV[2], 'attempt', '1', 'first', ARGV[3])
  return 1
end
return 0
`;
/** Queues one event in the Redis stream (what the key tools need, without delivering). */
export async function enqueueEvent(redis: Redis, event: WebhookEvent): Promise<void> {
  await redis.xadd(webhookKeys.stream, 'MAXLEN', '~', STREAM_MAXLEN, '*', 'event', JSON.stringify(event), 'attempt', '1', 'first', String(Date.now()));
}

/** The dead letters in Redis: paged and re-sent by the admin API and the CLI, which do not deliver. */
export function redisDeadLetters(redis: Redis): Pick<WebhookQueue, 'deadLetterPage' | 'resend'> & { indexUnindexed(): Promise<number> } {
  return createRedisDeadLetters(redis, webhookKeys.stream, STREAM_MAXLEN);
}

/**
 * The durable queue: a Redis stream and consumer group, so any instance delivers and a restart loses
 * nothing. An event is acknowledged and deleted from the stream only once it was delivered, moved to
 * the retry set, or given up (one MULTI each); an instance that dies mid-delivery leaves it pending,
 * and `XAUTOCLAIM` hands it to another after `reclaimIdleMs`. Delivery is at least once: a receiver
 * de-duplicates on `webhook-id` (the Standard Webhooks rule) for the rare crash between its 2xx and
 * the acknowledgement.
 *
 * `redis` serves the commands; `blocking` (its own connection) waits in XREADGROUP BLOCK. Only the
 * second is needed when delivering; the CLI builds it with `redis` alone.
 */
export function createRedisWebhookQueue(redis: Redis, options: RedisQueueOptions, logger?: Logger, blocking?: Redis): WebhookQueue {
  const deadLetters = redisDeadLetters(redis);
  const settings = { ...options, bounds: options.deadLetters ?? DEFAULT_DEAD_LETTER_BOUNDS, streamMaxLen: STREAM_MAXLEN };
  const delivery = blocking ? new RedisWebhookDelivery(redis, blocking, webhookKeys, settings, logger) : undefined;
  return {
    enqueue: (event) => enqueueEvent(redis, event),
    async enqueueOnce(onceKey, onceUntilMs, event) {
      const queued = await redis.eval(ENQUEUE_ONCE, 2, webhookKeys.stream, webhookKeys.once(onceKey), onceUntilMs, JSON.stringify(event), Date.now(), STREAM_MAXLEN);
      return queued === 1;
    },
    deadLetterPage: (query) => deadLetters.deadLetterPage(query),
    resend: (id) => deadLetters.resend(id),
    async backlog() {
      const replies = (await redis.multi().xlen(webhookKeys.stream).zcard(webhookKeys.retry).hlen(webhookKeys.dead).exec()) ?? [];
      const [queued, retrying, dead] = replies.map(([err, n]) => (err ? 0 : Number(n)));
      return { queued: queued ?? 0, retrying: retrying ?? 0, dead: dead ?? 0 };
    },
    startDelivery(attempt) {
      if (!delivery) throw new Error('delivering needs a blocking connection');
      delivery.start(attempt, () => deadLetters.indexUnindexed());
    },
    close: async () => delivery?.close(),
  };
}
