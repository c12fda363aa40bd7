import type Redis from 'ioredis';
import pino from 'pino';
import { connectRedis, whenReady, type RedisClient } from '../../gateway/redis/connect';
import { loadGatewayConfig } from '../../gateway/config/gateway-config';
import { parseRedisTopology, type RedisEnv } from '../../gateway/config/redis-env';
import { createKeyAdmin } from '../../gateway/keys/key-admin';
import { UNLIMITED } from './keys-files';

type LimitOverrides = { per_minute?: number; per_day?: number; per_month?: number };

/**
 * Creates keys in the Redis key store the way operators do (the key admin), straight on `redis`:
 * a Standard key for GB from 127.0.0.1, limits no test reaches unless given. Returns each new value
 * (and tells `onCreated`, e.g. to collect the values a leak check looks for).
 */
export function keyProvisioner(redis: RedisClient, gatewayConfigFile: string, onCreated: (value: string) => void = () => undefined) {
  const admin = createKeyAdmin(redis, loadGatewayConfig(gatewayConfigFile));
  return async (id: string, limits: LimitOverrides = {}): Promise<string> => {
    const { key } = await admin.create({ id, tier: 'standard', countries: ['GB'], address: '127.0.0.1', ...UNLIMITED, ...limits });
    onCreated(key);
    return key;
  };
}

/**
 * The test's own client of a Redis topology (cluster, sentinel), read from the gateway's
 * variables, with a generous command timeout; resolves once it is ready.
 */
export async function connectTopology(env: Omit<RedisEnv, 'REDIS_COMMAND_TIMEOUT_MS'>): Promise<RedisClient> {
  const client = connectRedis(parseRedisTopology({ ...env, REDIS_COMMAND_TIMEOUT_MS: 5000 })!, pino({ level: 'silent' }), 'test', { autoPipelining: false });
  if (!(await whenReady(client, 10_000))) {
    client.disconnect();
    throw new Error('the test client of the Redis topology was not ready within 10 s');
  }
  return client;
}

/** Requests counted for `keyId` in its per-minute windows, read straight from `redis` (the node holding its slot). */
export async function countedInMinutes(redis: Redis, keyId: string): Promise<number> {
  const names = await redis.keys(`lgw:{${keyId}}:minute:*`);
  const values = names.length ? await redis.mget(...names) : [];
  return values.reduce((sum, v) => sum + Number(v ?? 0), 0);
}

/** Requests accepted today (UTC) in `keyId`'s usage history, read straight from `redis`. */
export async function usageToday(redis: Redis, keyId: string): Promise<number> {
  const today = new Date().toISOString();
  return Number((await redis.hget(`lgw:{${keyId}}:usage:${today.slice(0, 7)}`, today.slice(8, 10))) ?? 0);
}
