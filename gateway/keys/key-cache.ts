import type { KeyLookup } from './key-record';

interface CacheEntry {
  readonly lookup: KeyLookup;
  readonly expiresAt: number;
  readonly cachedAt: number;
}

/** While change messages cannot arrive, nothing is trusted from the cache for longer than this. */
const UNSUBSCRIBED_TTL_MS = 500;

/**
 * The Redis key store's in-process cache of look-ups by hash, told of changes by the change channel
 * (redis-key-store-subscription.ts). Every invalidation bumps a generation: a read that started
 * before one must not cache what it read, or a change published while its reply was on the way
 * would be undone for a whole TTL.
 */
export function createKeyCache(maxEntries: number) {
  const cache = new Map<string, CacheEntry>();
  let generation = 0;
  let subscribed = false;
  return {
    get: (hash: string): CacheEntry | undefined => cache.get(hash),
    /** The generation a read starts in (hand it back to `remember`). */
    generation: (): number => generation,
    /**
     * A cached entry may answer while the subscription is up, or, while it is down (changes are
     * being missed), only for UNSUBSCRIBED_TTL_MS after it was read: a record cached before the
     * subscription dropped is read again instead of being trusted for the rest of its TTL.
     */
    trusted: (entry: CacheEntry, now: number): boolean => entry.expiresAt > now && (subscribed || now - entry.cachedAt < UNSUBSCRIBED_TTL_MS),
    remember(hash: string, lookup: KeyLookup, ttlMs: number, readGeneration: number): KeyLookup {
      if (readGeneration !== generation) return lookup; // invalidated while reading: answer, do not cache
      if (cache.size >= maxEntries) cache.delete(cache.keys().next().value as string);
      const now = Date.now();
      cache.set(hash, { lookup, expiresAt: now + ttlMs, cachedAt: now });
      return lookup;
    },
    /** Drops the given hashes (undefined: everything). */
    invalidate(hashes?: Iterable<string>): void {
      if (hashes) for (const hash of hashes) cache.delete(hash);
      else cache.clear();
      generation++;
    },
    /**
     * After a (re)subscription: messages sent meanwhile were lost, so nothing cached is trusted any
     * more (each record is read again before use), but known records stay as the fallback for a
     * store that cannot answer or has been lost.
     */
    distrustAll(): void {
      for (const [hash, entry] of cache) {
        if (entry.lookup.kind === 'found') cache.set(hash, { lookup: entry.lookup, expiresAt: 0, cachedAt: entry.cachedAt });
        else cache.delete(hash);
      }
      generation++;
    },
    setSubscribed(value: boolean): void {
      subscribed = value;
    },
    clear(): void {
      cache.clear();
    },
  };
}

export type KeyCache = ReturnType<typeof createKeyCache>;
