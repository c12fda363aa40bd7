import type { RedisClient } from '../redis/connect';
import { withDeadline } from '../redis/deadline';
import type { Subscriber } from '../redis/subscriber';
import type { Logger } from 'pino';
import type { GatewayConfig } from '../config/gateway-config';
import type { KeyLookup, KeyStore } from './key-record';
import type { EpochWatch, KeyStoreHealth } from './key-store-epoch';
import { toKeyRecord } from './key-record-build';
import { liveHashes, parseStoredKey, redisKeys } from './redis-layout';

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

interface CacheEntry {
  readonly lookup: KeyLookup;
  readonly expiresAt: number;
  readonly cachedAt: number;
}

const NOT_FOUND: KeyLookup = { kind: 'not_found' };
const UNAVAILABLE: KeyLookup = { kind: 'unavailable' };
/** While change messages cannot arrive, nothing is trusted from the cache for longer than this. */
const UNSUBSCRIBED_TTL_MS = 500;

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
  const cache = new Map<string, CacheEntry>();
  const inflight = new Map<string, Promise<KeyLookup>>();
  let subscribed = false;
  // Bumped by every invalidation: a read that started before one must not cache what it read, or a
  // change published while its reply was on the way would be undone for a whole TTL.
  let generation = 0;

  subscriber.on('message', (_channel: string, message: string) => {
    try {
      const { hashes } = JSON.parse(message) as { hashes?: unknown };
      if (Array.isArray(hashes)) for (const hash of hashes) if (typeof hash === 'string') cache.delete(hash);
    } catch {
      cache.clear();
    }
    generation++;
  });
  // The store owns its subscription: ioredis's own resubscription on reconnect is a promise nobody
  // awaits, so a SUBSCRIBE that timed out on a flapping connection was an unhandled rejection that
  // took the process down. Here every (re)subscription is made, awaited and handled below.
  subscriber.options.autoResubscribe = false;
  let subscribeFailed = false;
  // Messages sent while unsubscribed are lost: on every (re)subscription nothing cached is trusted
  // any more (each record is read again before use), but known records are kept as the fallback for
  // a store that cannot answer or has been lost.
  subscriber.on('ready', () => {
    subscriber
      .subscribe(redisKeys.changes)
      .then(() => {
        for (const [hash, entry] of cache) {
          if (entry.lookup.kind === 'found') cache.set(hash, { lookup: entry.lookup, expiresAt: 0, cachedAt: entry.cachedAt });
          else cache.delete(hash);
        }
        generation++;
        subscribed = true;
        if (subscribeFailed) logger.info('key change subscription back');
        subscribeFailed = false;
      })
      .catch((err: Error) => {
        // Logged once until it works again; the connection is dropped so it reconnects and retries.
        if (!subscribeFailed) logger.warn({ err: err.message }, 'key change subscription failed: retrying');
        subscribeFailed = true;
        subscriber.disconnect(true);
      });
  });
  subscriber.on('close', () => {
    subscribed = false;
  });

  /**
   * A cached entry may answer while the subscription is up, or, while it is down (changes are being
   * missed), only for UNSUBSCRIBED_TTL_MS after it was read: a record cached before the subscription
   * dropped is read again instead of being trusted for the rest of its TTL.
   */
  const trusted = (entry: CacheEntry, now: number): boolean =>
    entry.expiresAt > now && (subscribed || now - entry.cachedAt < UNSUBSCRIBED_TTL_MS);

  function remember(hash: string, lookup: KeyLookup, ttlMs: number, readGeneration: number): KeyLookup {
    if (readGeneration !== generation) return lookup; // invalidated while reading: answer, do not cache
    if (cache.size >= maxEntries) cache.delete(cache.keys().next().value as string);
    const now = Date.now();
    cache.set(hash, { lookup, expiresAt: now + ttlMs, cachedAt: now });
    return lookup;
  }

  /**
   * Not in the store. When the store has been lost, a record this instance knew stays valid and an
   * unknown key cannot be judged (503); otherwise it is not found. A record that vanishes makes the
   * marker be read at once, so the loss is caught before a valid key is refused.
   */
  async function missing(hash: string, known: KeyLookup | undefined, started: number): Promise<KeyLookup> {
    const epoch = options.epoch;
    if (epoch && (epoch.health === 'lost' || (known?.kind === 'found' && (await epoch.verify())))) {
      if (known?.kind === 'found') return remember(hash, known, cacheTtlMs, started);
      return UNAVAILABLE;
    }
    return remember(hash, NOT_FOUND, negativeTtlMs, started);
  }

  async function read(hash: string, known: KeyLookup | undefined): Promise<KeyLookup> {
    const started = generation;
    const id = await redis.get(redisKeys.byHash(hash));
    if (id === null) return missing(hash, known, started);
    const stored = parseStoredKey(await redis.get(redisKeys.record(id)));
    const now = Date.now();
    if (!stored) return missing(hash, known, started);
    if (!liveHashes(stored, now).includes(hash)) {
      // The pointer outlives the grace a little (key-admin.ts), so the log can say whose value it was.
      const whose: KeyLookup = hash === stored.previous_key_sha256 ? { kind: 'not_found', keyId: stored.id, reason: 'expired_grace' } : NOT_FOUND;
      return remember(hash, whose, negativeTtlMs, started);
    }
    options.epoch?.noteFound();
    const lookup: KeyLookup = { kind: 'found', record: toKeyRecord(stored, config), ...(hash === stored.key_sha256 ? {} : { previous: true as const }) };
    // A previous value stops working exactly when its grace ends, cached or not.
    const ttl = hash === stored.key_sha256 ? cacheTtlMs : Math.min(cacheTtlMs, (stored.previous_expires_at ?? now) - now);
    return remember(hash, lookup, ttl, started);
  }

  return {
    lookup(hash) {
      const entry = cache.get(hash);
      if (entry && trusted(entry, Date.now())) {
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
    updateConfig(next) {
      config = next;
      cache.clear();
      generation++;
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
