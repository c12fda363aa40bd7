/**
 * A Redis-backed stack: a real redis-server (on a free loopback port), the test's own client of
 * it, a data service and gateways sharing that Redis (KEY_STORE=redis unless told otherwise).
 * `stop()` stops the gateways, the data service, the client and the server.
 */
import Redis from 'ioredis';
import { Stack, type StackOptions } from './gateways';
import { keyProvisioner } from './redis-keys';
import { startRedis, type RedisServer } from './redis-server';

export interface RedisStackOptions extends Omit<StackOptions, 'keys'> {
  /** Keys of the keys file (default none: the keys live in Redis). */
  keys?: StackOptions['keys'];
  /** Environment of every gateway, under each one's entry of `gateways` (e.g. REDIS_COMMAND_TIMEOUT_MS). */
  env?: Record<string, string>;
  /** The gateways' key store (default 'redis'; 'file' keeps keys in the YAML file, counters in Redis). */
  keyStore?: 'redis' | 'file';
  /** Writes reach the append-only file before they are acknowledged (a restarted server has its data). */
  persistent?: boolean;
  /** Where the gateways find Redis, given the server (default its URL; e.g. a TCP proxy in front of it). */
  redisUrl?: (server: RedisServer) => string | Promise<string>;
}

export class RedisStack extends Stack {
  redisServer!: RedisServer;
  /** The test's own client of the server (not through any proxy). */
  redis!: Redis;
  private closedRedis = false;

  constructor(readonly redisOptions: RedisStackOptions) {
    super({ ...redisOptions, keys: redisOptions.keys ?? [] });
  }

  override async start(): Promise<this> {
    this.redisServer = await startRedis({ persistent: this.redisOptions.persistent });
    this.redis = new Redis(this.redisServer.url);
    // Suites kill and restart the server on purpose: the client reconnects; a command then rejects.
    this.redis.on('error', () => undefined);
    const url = this.redisOptions.redisUrl ? await this.redisOptions.redisUrl(this.redisServer) : this.redisServer.url;
    this.baseEnv = {
      REDIS_URL: url,
      ...(this.redisOptions.keyStore === 'file' ? {} : { KEY_STORE: 'redis' }),
      ...this.redisOptions.env,
    };
    return super.start();
  }

  /** Creates a key in Redis as operators do (see keyProvisioner); returns its value. */
  provisioner(onCreated?: (value: string) => void): ReturnType<typeof keyProvisioner> {
    return keyProvisioner(this.redis, this.gatewayConfig, onCreated);
  }

  override async stop(): Promise<void> {
    await super.stop();
    if (this.closedRedis) return;
    this.closedRedis = true;
    this.redis?.disconnect();
    await this.redisServer?.stop();
  }
}

/** Starts a RedisStack; on a failure stops what was started and rethrows. */
export async function startRedisStack(options: RedisStackOptions = {}): Promise<RedisStack> {
  const stack = new RedisStack(options);
  try {
    return await stack.start();
  } catch (err) {
    await stack.stop().catch(() => undefined);
    throw err;
  }
}
