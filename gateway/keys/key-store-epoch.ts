import { randomUUID } from 'node:crypto';
import type { RedisClient } from '../redis/connect';
import type { Logger } from 'pino';
import { redisKeys } from './redis-layout';

/**
 * The key-store marker: a random id written beside the key records (`SET NX`) by every tool that
 * adds records (the CLI, the admin API, `keys import`). A Redis that restarted without persistence,
 * or was flushed, answers without it: that is how a lost key store is told from a store that never
 * held keys (docs/guarantees.md).
 */
export const KEY_STORE_EPOCH = redisKeys.epoch;

/** A new marker value (written with `SET NX`, so the first writer's value stays). */
export const newEpoch = (): string => randomUUID();

/** `ok`, or `lost`: the store answers without the marker this instance saw before. */
export type KeyStoreHealth = 'ok' | 'lost';

export interface EpochWatch {
  readonly health: KeyStoreHealth;
  /**
   * Reads the marker now and updates the state; resolves to true when the store is lost. Concurrent
   * calls share one read. Rejects when Redis cannot answer (the state is then left as it was).
   */
  verify(): Promise<boolean>;
  /**
   * Told when the store returned a record: if no marker has been seen yet (the store was empty when
   * this instance started), it is read now, so a loss right after is recognised as one.
   */
  noteFound(): void;
  close(): void;
}

export interface EpochWatchOptions {
  /** How often the marker is read besides every reconnection (a FLUSHALL keeps the connection). */
  readonly intervalMs?: number;
  /** Told of every change of state (metrics). */
  readonly onChange?: (health: KeyStoreHealth) => void;
}

/**
 * Watches the marker: on every (re)connection, every `intervalMs`, and whenever the key store asks
 * (a record it knew is suddenly not found). A store that holds records but no marker (written
 * before the marker existed) gets one. The loss is logged once as an error, and its end (the store
 * restored, e.g. by `keys import` of an export) once as info.
 */
export function watchKeyStoreEpoch(redis: RedisClient, logger: Logger, options: EpochWatchOptions = {}): EpochWatch {
  let seen: string | undefined;
  let health: KeyStoreHealth = 'ok';
  let pending: Promise<boolean> | undefined;

  const become = (next: KeyStoreHealth): void => {
    if (next === health) return;
    health = next;
    options.onChange?.(next);
    if (next === 'lost') {
      logger.error(
        { reason: 'key_store_lost' },
        'key store lost: Redis answers without the key-store marker (restarted without persistence, or flushed); keys this instance knows keep working from its cache, others get 503; restore the store with keys import of an export',
      );
    } else logger.info('key store restored: its marker is back');
  };

  async function read(): Promise<boolean> {
    const epoch = await redis.get(KEY_STORE_EPOCH);
    if (epoch !== null) {
      if (seen !== undefined && seen !== epoch && health === 'ok') {
        // Emptied and filled again between two checks: the records may not be the ones cached.
        logger.error({ reason: 'key_store_replaced' }, 'key store replaced: its marker changed (the store was emptied and filled again)');
      }
      seen = epoch;
      become('ok');
      return false;
    }
    if (seen !== undefined) {
      become('lost');
      return true;
    }
    // Never saw a marker: a store from before markers gets one; an empty store is simply empty.
    if ((await redis.scard(redisKeys.ids)) > 0) {
      await redis.set(KEY_STORE_EPOCH, newEpoch(), 'NX');
      seen = (await redis.get(KEY_STORE_EPOCH)) ?? undefined;
    }
    return false;
  }

  const verify = (): Promise<boolean> => {
    pending ??= read().finally(() => {
      pending = undefined;
    });
    return pending;
  };
  const quietly = (): void => void verify().catch(() => undefined);

  redis.on('ready', quietly);
  if (redis.status === 'ready') quietly();
  const timer = setInterval(quietly, options.intervalMs ?? 5000);
  timer.unref();

  return {
    get health() {
      return health;
    },
    verify,
    noteFound() {
      if (seen === undefined) quietly();
    },
    close() {
      clearInterval(timer);
      redis.off('ready', quietly);
    },
  };
}
