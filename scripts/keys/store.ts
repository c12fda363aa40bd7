import type Redis from 'ioredis';
import pino from 'pino';
import { parseEnv } from '../../gateway/config/env';
import { loadGatewayConfig } from '../../gateway/config/gateway-config';
import { createKeyAdmin, type KeyAdmin } from '../../gateway/keys/key-admin';
import { connectRedis, whenReady } from '../../gateway/redis/connect';
import { UsageError } from './command';

/** How long the CLI waits for Redis to answer a command (longer than the hot path's: a write must not be reported failed while it applies). */
const COMMAND_TIMEOUT_MS = 5000;

/** The Redis key store, connected from the environment; `close` ends the connection. */
export async function openKeyAdmin(): Promise<{ admin: KeyAdmin; redis: Redis; close(): void }> {
  const env = parseEnv();
  if (!env.REDIS_URL) throw new UsageError('REDIS_URL is not set: store commands work on the Redis key store (KEY_STORE=redis)');
  const config = loadGatewayConfig(env.GATEWAY_CONFIG);
  const redis = connectRedis(env.REDIS_URL, pino({ level: 'silent' }), 'cli', { commandTimeoutMs: COMMAND_TIMEOUT_MS, autoPipelining: false });
  if (!(await whenReady(redis, COMMAND_TIMEOUT_MS))) {
    redis.disconnect();
    throw new UsageError(`cannot reach Redis at ${new URL(env.REDIS_URL).host}`);
  }
  const admin = createKeyAdmin(redis, config, undefined, { maxEntries: env.AUDIT_MAX_ENTRIES, days: env.AUDIT_RETENTION_DAYS });
  return { admin, redis, close: () => redis.disconnect() };
}
