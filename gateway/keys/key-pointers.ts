import { ApiError } from '../errors';
import { LOST, untilSet } from '../audit/cas-loop';
import type { RedisClient } from '../redis/connect';
import { compareAndSet } from '../redis/compare-and-set';
import { liveHashes, parseStoredKey, redisKeys, type StoredKey } from './redis-layout';

/** 503 with `Retry-After: 1`: the record (or a pointer) kept changing under this writer. */
export const concurrentChange = (): ApiError => new ApiError('service_unavailable', {}, 1, 'The key is being changed concurrently; retry.');

/** Points `hash` at `id`, unless a record still using it owns it (then 400 naming key_sha256). */
async function claimHash(redis: RedisClient, hash: string, id: string): Promise<void> {
  const pointer = redisKeys.byHash(hash);
  await untilSet(async () => {
    if ((await redis.set(pointer, id, 'NX')) === 'OK') return true;
    const owner = await redis.get(pointer);
    if (owner === null) return LOST;
    if (owner === id) {
      await redis.persist(pointer); // e.g. a previous value's pointer (with its grace expiry) made current again
      return true;
    }
    const ownerRecord = parseStoredKey(await redis.get(redisKeys.record(owner)));
    if (ownerRecord && liveHashes(ownerRecord, Date.now()).includes(hash)) {
      throw new ApiError('invalid_parameter', { parameter: 'key_sha256' }, undefined, `The hash of "${id}" is already used by another key.`);
    }
    // Left by a writer that died before its record named it, or by a record since changed: take it over.
    return (await compareAndSet(redis, pointer, owner, id)) ? true : LOST;
  }, concurrentChange);
}

/**
 * The key record's pointers (hash → id, the id list, the account's key index), written around the
 * record's own compare-and-set (gateway/audit/audited-write.ts, by key-writer.ts) without a
 * transaction: a record and the pointers of its hashes live in different Redis Cluster slots, so
 * MULTI cannot span them.
 *
 * The record decides: a value authenticates only when its pointer leads to a record that is itself
 * still listing that hash as live (current, or previous within its grace) — the key store checks
 * this on every read. Pointers are only an index: new ones are claimed BEFORE the record names
 * them (`claim`, so a new value works as soon as the record says so) and stale ones removed AFTER
 * the record stopped naming them (`tidy`, `tidyRemoved`). Whatever step a writer dies at, a pointer
 * is at worst left leading to a record that does not list it, which authenticates nothing; no step
 * can make a paused, revoked, rolled-away or unknown value usable.
 */
export function createKeyPointers(redis: RedisClient) {
  /**
   * Removes the pointers of `hashes` that still lead to `id`. Only those: once the record stopped
   * naming a hash, another writer may claim its pointer (claimHash above) before this runs.
   */
  async function releaseHashes(hashes: readonly string[], id: string): Promise<void> {
    for (const hash of hashes) await compareAndSet(redis, redisKeys.byHash(hash), id, null);
  }

  return {
    /** Before the record `after` is written: its current value's pointer (always: it also repairs one a crashed writer never made), its id, its account's index. */
    async claim(after: StoredKey): Promise<void> {
      await claimHash(redis, after.key_sha256, after.id);
      await redis.sadd(redisKeys.ids, after.id); // a listed id without a record is skipped
      // Readers check each record against the account's key index (gateway/accounts/).
      if (after.account !== undefined) await redis.sadd(redisKeys.accountKeys(after.account), after.id);
    },
    /** After `after` replaced `before` (undefined: the id was new): the pointers it no longer names. */
    async tidy(before: StoredKey | undefined, after: StoredKey): Promise<void> {
      if (after.previous_key_sha256 && after.previous_expires_at !== undefined && after.previous_key_sha256 !== before?.previous_key_sha256) {
        // Tidiness only: the record's grace ends the old value's use, cached or not.
        await redis.pexpireat(redisKeys.byHash(after.previous_key_sha256), after.previous_expires_at);
      }
      if (before) {
        const keep = new Set(liveHashes(after, Date.now()));
        await releaseHashes(liveHashes(before, Date.now()).filter((hash) => !keep.has(hash)), after.id);
      }
    },
    /** After the record was removed: its id and its pointers (the record decides: once it is gone they authenticate nothing). */
    async tidyRemoved(stored: StoredKey): Promise<void> {
      await redis.srem(redisKeys.ids, stored.id);
      await releaseHashes(liveHashes(stored, 0), stored.id);
    },
  };
}

export type KeyPointers = ReturnType<typeof createKeyPointers>;
