/**
 * The shared Redis (when the environment names one) and the counters: in Redis, falling back to
 * this process's memory while Redis is away; in memory without Redis. Start-up looks at Redis once:
 * a refusal (credentials, ACL, TLS, a cluster node given as one Redis) exits 1 with one line; away,
 * it starts and counts per instance until Redis answers.
 */
import type { Logger } from 'pino';
import type { Env } from '../config/env';
import type { RedisTopology } from '../config/redis-env';
import { redisKeys } from '../keys/redis-layout';
import type { Counters } from '../limits/counters';
import { createMemoryCounters } from '../limits/memory-counters';
import { createRedisCounters } from '../limits/redis-counters';
import { createResilientCounters, type ResilientCounters } from '../limits/resilient-counters';
import type { Metrics } from '../ops/metrics';
import { connectRedis, type RedisClient } from '../redis/connect';
import { createRedisHealth, type RedisHealth } from '../redis/health';
import { checkAtStartup } from '../redis/startup-check';
import type { Subscriber } from '../redis/subscriber';

/** Start-up waits this long for Redis before serving anyway (degraded: /readyz says so). */
const REDIS_STARTUP_WAIT_MS = 3_000;

/** The shared Redis: its topology, health, the hot path's connection, and a factory for more. */
export interface SharedRedis {
  readonly topology: RedisTopology;
  readonly health: RedisHealth;
  /** The hot path's connection (counters, key look-ups). */
  readonly client: RedisClient;
  /** One more connection for `role` (each closed on shutdown). */
  connect(role: string, autoPipelining?: boolean, commandTimeoutMs?: number): RedisClient;
  /** Adds a connection made elsewhere (the key store's subscriber) to those closed on shutdown. */
  adopt(client: Subscriber): void;
  /** Quits every connection (disconnects those that cannot quit). */
  close(): Promise<unknown>;
}

export interface RedisAndCounters {
  readonly redis?: SharedRedis;
  readonly counters: Counters;
  /** The Redis counters with their fallback, when there is a Redis (readiness reports their state). */
  readonly sharedCounters?: ResilientCounters;
}

function openRedis(env: Env, topology: RedisTopology, logger: Logger): SharedRedis {
  const health = createRedisHealth(topology, logger);
  const clients: Array<RedisClient | Subscriber> = [];
  const connect = (role: string, autoPipelining = true, commandTimeoutMs = env.REDIS_COMMAND_TIMEOUT_MS): RedisClient => {
    const client = connectRedis(topology, logger, role, { commandTimeoutMs, autoPipelining, health });
    clients.push(client);
    return client;
  };
  return {
    topology,
    health,
    client: connect('commands'),
    connect,
    adopt: (client) => void clients.push(client),
    close: () => Promise.all(clients.map((c) => c.quit().catch(() => c.disconnect()))),
  };
}

export async function startRedisAndCounters(env: Env, logger: Logger, metrics: Metrics): Promise<RedisAndCounters> {
  const memoryCounters = createMemoryCounters();
  const topology = env.redis;
  if (!topology) return { counters: memoryCounters };
  const redis = openRedis(env, topology, logger);
  const client = redis.client;
  client.on('ready', () => metrics.redisUp.set(1));
  client.on('close', () => metrics.redisUp.set(0));
  metrics.redisUp.set(0);
  // Only a cluster client retries a command internally before writing it (deadline.ts): elsewhere
  // the client's own command timeout already bounds every call.
  const deadlineMs = topology.kind === 'cluster' ? env.REDIS_COMMAND_TIMEOUT_MS : undefined;
  const redisCounters = createRedisCounters(client, deadlineMs ? { deadlineMs } : {});
  const sharedCounters = createResilientCounters(redisCounters, memoryCounters, client, logger, redis.health);
  const probeLimits = { perMinute: 1, perDay: 1, perMonth: 1 };
  const probe = (): Promise<unknown> => Promise.all([redisCounters.peek('startup-probe', probeLimits), ...(env.KEY_STORE === 'redis' ? [client.get(redisKeys.byHash('startup-probe'))] : [])]);
  const outcome = await checkAtStartup(client, topology, redis.health, probe, REDIS_STARTUP_WAIT_MS);
  if (outcome.kind === 'refused') {
    process.stderr.write(`config error: environment variable ${outcome.line}\n`);
    process.exit(1);
  }
  if (outcome.kind === 'away') logger.warn('redis not reachable at start-up: counting per instance until it is');
  return { redis, counters: sharedCounters, sharedCounters };
}
