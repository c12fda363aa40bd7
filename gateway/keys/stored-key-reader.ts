import type { GatewayConfig } from '../config/gateway-config';
import type { RedisClient } from '../redis/connect';
import type { KeyCache } from './key-cache';
import type { KeyLookup } from './key-record';
import { toKeyRecord } from './key-record-build';
import type { EpochWatch } from './key-store-epoch';
import { authenticatingHashes, parseStoredKey, redisKeys } from './redis-layout';

const NOT_FOUND: KeyLookup = { kind: 'not_found' };
export const UNAVAILABLE: KeyLookup = { kind: 'unavailable' };

/**
 * The Redis key store's read of one hash (pointer, then record), remembered in `cache` for as long
 * as it may be trusted: a found record `cacheTtlMs` (a previous value of a roll no longer than its
 * grace), an unknown hash `negativeTtlMs`. `known` is what the cache held (the fallback of a lost store).
 */
export function createStoredKeyReader(
  redis: RedisClient,
  cache: KeyCache,
  config: () => GatewayConfig,
  options: { cacheTtlMs: number; negativeTtlMs: number; epoch?: EpochWatch },
): (hash: string, known: KeyLookup | undefined) => Promise<KeyLookup> {
  const { cacheTtlMs, negativeTtlMs } = options;
  const remember = cache.remember;

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
    const started = cache.generation();
    const id = await redis.get(redisKeys.byHash(hash));
    if (id === null) return missing(hash, known, started);
    const stored = parseStoredKey(await redis.get(redisKeys.record(id)));
    const now = Date.now();
    if (!stored) return missing(hash, known, started);
    if (!authenticatingHashes(stored, now).includes(hash)) {
      // The pointer outlives the grace a little (key-admin.ts), so the log can say whose value it was.
      const whose: KeyLookup = stored.leaked_key_sha256?.includes(hash)
        ? { kind: 'not_found', keyId: stored.id, reason: 'value_ended' }
        : hash === stored.previous_key_sha256 ? { kind: 'not_found', keyId: stored.id, reason: 'expired_grace' } : NOT_FOUND;
      return remember(hash, whose, negativeTtlMs, started);
    }
    options.epoch?.noteFound();
    const lookup: KeyLookup = { kind: 'found', record: toKeyRecord(stored, config()), ...(hash === stored.key_sha256 ? {} : { previous: true as const }) };
    // A previous value stops working exactly when its grace ends, cached or not.
    const ttl = hash === stored.key_sha256 ? cacheTtlMs : Math.min(cacheTtlMs, (stored.previous_expires_at ?? now) - now);
    return remember(hash, lookup, ttl, started);
  }

  return read;
}
