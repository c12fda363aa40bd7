/**
 * Usage history and webhooks. Usage: in Redis when there is one (shared, durable), else in this
 * process's memory. Quota notifications and key events, signed per Standard Webhooks: durable in
 * Redis, else in memory (best effort).
 */
import { defined } from '../defined';
import type { Logger } from 'pino';
import type { Env } from '../config/env';
import { DEFAULT_QUOTA_THRESHOLDS, type GatewayConfig } from '../config/gateway-config';
import { createMemoryUsageStore } from '../usage/memory-usage-store';
import { createRedisUsageStore } from '../usage/redis-usage-store';
import type { UsageStore } from '../usage/usage-model';
import { createUsageRecorder, type UsageRecorder } from '../usage/usage-recorder';
import { startWebhooks, type Webhooks } from '../webhooks/start-webhooks';
import type { SharedRedis } from './redis-and-counters';

/** Command timeout of the connections off the request's way (usage flushes, webhooks, the admin API; as the keys CLI's). */
export const BACKGROUND_COMMAND_TIMEOUT_MS = 5_000;

export interface UsageAndWebhooks {
  readonly usageStore: UsageStore;
  /** Records each answered request, when USAGE_HISTORY is on. */
  readonly usage?: UsageRecorder;
  /** When WEBHOOK_URL is set. */
  readonly webhooks?: Webhooks;
}

function webhooksOf(env: Env, config: GatewayConfig, redis: SharedRedis | undefined, logger: Logger): Webhooks | undefined {
  if (!env.WEBHOOK_URL) return undefined;
  const settings = {
    url: env.WEBHOOK_URL,
    secret: env.WEBHOOK_SECRET!,
    timeoutMs: env.WEBHOOK_TIMEOUT_MS,
    retryBaseMs: env.WEBHOOK_RETRY_BASE_MS,
    retryMaxMs: env.WEBHOOK_RETRY_MAX_MS,
    giveUpAfterMs: env.WEBHOOK_GIVE_UP_AFTER_MS,
    concurrency: env.WEBHOOK_CONCURRENCY,
    pollMs: env.WEBHOOK_POLL_MS,
    deadLetters: { maxCount: env.WEBHOOK_DEAD_MAX, maxAgeMs: env.WEBHOOK_DEAD_MAX_AGE_MS },
    thresholds: config.quotaThresholds ?? DEFAULT_QUOTA_THRESHOLDS,
  };
  const connections = redis
    ? { commands: redis.connect('webhooks', false, BACKGROUND_COMMAND_TIMEOUT_MS), waiting: redis.connect('webhooks-wait', false, env.WEBHOOK_POLL_MS + 5_000) }
    : undefined;
  return startWebhooks(settings, logger, connections);
}

export function startUsageAndWebhooks(env: Env, config: GatewayConfig, redis: SharedRedis | undefined, logger: Logger): UsageAndWebhooks {
  // Its own connection with a longer timeout: flushes are off the request's way, and a timed-out
  // increment is dropped rather than risk counting twice.
  const usageStore = redis ? createRedisUsageStore(redis.connect('usage', true, BACKGROUND_COMMAND_TIMEOUT_MS)) : createMemoryUsageStore();
  const usage = env.USAGE_HISTORY === 'on' ? createUsageRecorder(usageStore, { flushMs: env.USAGE_FLUSH_MS, logger }) : undefined;
  const webhooks = webhooksOf(env, config, redis, logger);
  return { usageStore, ...defined({ usage, webhooks }) };
}
