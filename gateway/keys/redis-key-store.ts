import type { RedisClient } from '../redis/connect';
import { withDeadline } from '../redis/deadline';
import type { Subscriber } from '../redis/subscriber';
import type { Logger } from 'pino';
import type { GatewayConfig } from '../config/gateway-config';
import type { KeyLookup, KeyStore } from './key-record';
import type { EpochWatch, KeyStoreHealth } from './key-store-epoch';
import { createKeyCache } from './key-cache';
import { followKeyChanges } from './key-change-subscription';
import { createStoredKeyReader, UNAVAILABLE } from './stored-key-reader';

export interface RedisKeyStoreOptions {
  /** A found record is re-read after this long even without a change message (safety net). */
  readonly cacheTtlMs?: number;
  /** An unknown hash is remembered this long, so a flood of one bad key costs one look-up. */
  readonly negativeTtlMs?: number;
  /** Entries kept at most; the oldest go first. */
  readonly maxEntries?: number;
  /** Told of every look-up: served from the cache, read from Redis, or served stale during an outage. */
  readonly onLookup?: (result: 'hit' | 'miss' | 'stale' | 'unavailable') => void;
  /** The key-store marker's watch: a record that vanishes is checked against it (store lost?). */
  readonly epoch?: EpochWatch;
  /** Told of a failed read (so a refusal of this configuration is told from an outage). */
  readonly onError?: (err: unknown) => void;
  /** A look-up waits at most this long for Redis (then it is answered as during an outage). */
  readonly deadlineMs?: number;
}

export interface RedisKeyStore extends KeyStore {
  /** New tier defaults (hot reload of the gateway config): cached records are rebuilt on next use. */
  updateConfig(config: GatewayConfig): void;
  /** For /readyz: `ok`, `cache_only` (Redis away), `lost` (the store was emptied). */
  state(): 'ok' | 'cache_only' | KeyStoreHealth;
  close(): Promise<void>;
}

/**
 * Key records in Redis, read through an in-process cache. Every instance subscribes to the change
 * channel and drops the changed hashes at once, so a pause, settlement, revocation, country or tier
 * change is seen everywhere well within a second. A cached record costs no round trip. Concurrent
 * misses for one hash share one look-up. While Redis is down, cached records keep working (even past
 * their TTL) and an uncached key is `unavailable` (503), never `not_found` (401).
 *
 * A lost store (Redis restarted empty or flushed; see key-store-epoch.ts) is survived the same way:
 * a record this instance knew is served from the cache although the store no longer has it (never
 * 401 for a key that was valid), and an unknown key is `unavailable` (503) until the store is back.
 */
export function createRedisKeyStore(
  redis: RedisClient,
  subscriber: Subscriber,
  initialConfig: GatewayConfig,
  logger: Logger,
  options: RedisKeyStoreOptions = {},
): RedisKeyStore {
  const observe = options.onLookup ?? ((): void => undefined);
  const cacheTtlMs = options.cacheTtlMs ?? 30_000;
  const negativeTtlMs = options.negativeTtlMs ?? 2_000;
  const maxEntries = options.maxEntries ?? 200_000;
  let config = initialConfig;
  const cache = createKeyCache(maxEntries);
  const inflight = new Map<string, Promise<KeyLookup>>();
  followKeyChanges(subscriber, cache, logger);

  const read = createStoredKeyReader(redis, cache, () => config, { cacheTtlMs, negativeTtlMs, ...(options.epoch ? { epoch: options.epoch } : {}) });

  return {
    lookup(hash) {
      const entry = cache.get(hash);
      if (entry && cache.trusted(entry, Date.now())) {
        observe('hit');
        return entry.lookup;
      }
      const fallback = (): KeyLookup => {
        const stale = entry?.lookup.kind === 'found';
        observe(stale ? 'stale' : 'unavailable');
        return stale ? entry!.lookup : UNAVAILABLE;
      };
      if (redis.status !== 'ready') return fallback();
      let pending = inflight.get(hash);
      if (!pending) {
        observe('miss');
        pending = (options.deadlineMs ? withDeadline(read(hash, entry?.lookup), options.deadlineMs) : read(hash, entry?.lookup))
          .catch((err: unknown) => {
            options.onError?.(err);
            return fallback();
          })
          .finally(() => inflight.delete(hash));
        inflight.set(hash, pending);
      }
      return pending;
    },
    known(hash) {
      const lookup = cache.get(hash)?.lookup;
      return lookup?.kind === 'found' ? lookup.record : undefined;
    },
    updateConfig(next) {
      config = next;
      cache.invalidate();
    },
    state() {
      if (options.epoch?.health === 'lost') return 'lost';
      return redis.status === 'ready' ? 'ok' : 'cache_only';
    },
    async close() {
      options.epoch?.close();
      cache.clear();
    },
  };
}
