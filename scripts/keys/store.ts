import pino from 'pino';
import { parseEnv } from '../../gateway/config/env';
import { loadGatewayConfig } from '../../gateway/config/gateway-config';
import { createKeyAdmin, type KeyAdmin } from '../../gateway/keys/key-admin';
import { redisKeys } from '../../gateway/keys/redis-layout';
import { createKeyEventSink } from '../../gateway/webhooks/key-events';
import { connectRedis, type RedisClient } from '../../gateway/redis/connect';
import { createRedisHealth } from '../../gateway/redis/health';
import { checkAtStartup } from '../../gateway/redis/startup-check';
import { UsageError } from './command';

/** How long the CLI waits for Redis to answer a command (longer than the hot path's: a write must not be reported failed while it applies). */
const COMMAND_TIMEOUT_MS = 5000;

/** The Redis key store, connected from the environment (any topology the gateway takes); `close` ends the connection. */
export async function openKeyAdmin(): Promise<{ admin: KeyAdmin; redis: RedisClient; close(): void }> {
  const env = parseEnv();
  const topology = env.redis;
  if (!topology) throw new UsageError('no Redis is set (REDIS_URL, REDIS_CLUSTER_NODES or REDIS_SENTINELS): store commands work on the Redis key store (KEY_STORE=redis)');
  const config = loadGatewayConfig(env.GATEWAY_CONFIG);
  const silent = pino({ level: 'silent' });
  const health = createRedisHealth(topology, silent);
  const redis = connectRedis(topology, silent, 'cli', { commandTimeoutMs: COMMAND_TIMEOUT_MS, autoPipelining: false, health });
  const outcome = await checkAtStartup(redis, topology, health, () => redis.smembers(redisKeys.ids), COMMAND_TIMEOUT_MS);
  if (outcome.kind !== 'ready') {
    redis.disconnect();
    throw new UsageError(outcome.kind === 'refused' ? `environment variable ${outcome.line}` : `cannot reach Redis at ${topology.where}`);
  }
  const admin = createKeyAdmin(redis, config, undefined, { maxEntries: env.AUDIT_MAX_ENTRIES, days: env.AUDIT_RETENTION_DAYS }, createKeyEventSink(redis));
  return { admin, redis, close: () => redis.disconnect() };
}
