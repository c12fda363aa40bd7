import Redis from 'ioredis';
import type { Logger } from 'pino';

export interface RedisOptions {
  /** A command that gets no answer within this time fails (the caller falls back). */
  readonly commandTimeoutMs?: number;
  /** Batch concurrent commands into one write (hot path); off for connections that run transactions. */
  readonly autoPipelining?: boolean;
}

/**
 * An ioredis client that fails fast instead of piling up: no offline queue (commands fail at once
 * while disconnected), one retry per command, a command timeout, and reconnection with a capped
 * backoff. Connection changes are logged once per change, never per request.
 */
export function connectRedis(url: string, logger: Logger, role: string, options: RedisOptions = {}): Redis {
  const client = new Redis(url, {
    commandTimeout: options.commandTimeoutMs ?? 500,
    maxRetriesPerRequest: 1,
    enableOfflineQueue: false,
    enableAutoPipelining: options.autoPipelining ?? true,
    connectTimeout: 2000,
    retryStrategy: (attempt) => Math.min(attempt * 100, 1000),
    lazyConnect: false,
  });
  let connected = false;
  client.on('ready', () => {
    if (!connected) logger.info({ redis: role }, 'redis connected');
    connected = true;
  });
  client.on('error', () => {
    /* state changes are logged below; errors repeat on every reconnect attempt */
  });
  client.on('close', () => {
    if (connected) logger.warn({ redis: role }, 'redis connection lost');
    connected = false;
  });
  return client;
}

/** Resolves when the client is ready or `timeoutMs` has passed (start-up does not wait forever). */
export function whenReady(client: Redis, timeoutMs: number): Promise<boolean> {
  if (client.status === 'ready') return Promise.resolve(true);
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      client.off('ready', onReady);
      resolve(false);
    }, timeoutMs);
    const onReady = (): void => {
      clearTimeout(timer);
      resolve(true);
    };
    client.once('ready', onReady);
  });
}
