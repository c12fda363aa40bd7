import type { RedisClient as Redis } from '../redis/connect';
import type { Logger } from 'pino';
import { newEvent, type KeyEventSink } from './webhook-event';
import { enqueueEvent, webhookKeys } from './redis-webhook-queue';

/**
 * Key events from the operator tools (CLI and admin API) into the Redis queue. They are queued only
 * while some gateway instance delivers (it keeps a marker with a TTL in Redis), so a deployment
 * without webhooks collects nothing. A failure to queue is logged and does not undo the change,
 * which is already committed.
 */
export function createKeyEventSink(redis: Redis, logger?: Logger): KeyEventSink {
  return async (type, data) => {
    try {
      if ((await redis.exists(webhookKeys.on)) === 0) return;
      await enqueueEvent(redis, newEvent(type, data));
    } catch (err) {
      logger?.warn({ err: (err as Error).message, type, key_id: data.key_id }, 'key changed, but its webhook event could not be queued');
    }
  };
}
