import { ApiError } from '../errors';
import type { RedisClient } from '../redis/connect';
import { compareAndSet as compareAndSetIn } from '../redis/compare-and-set';
import { LOST, retryCompareAndSet } from './cas-retry';
import { liveHashes, parseStoredKey, redisKeys, type StoredKey } from './redis-layout';

/** Points `hash` at `id`, unless a record still using it owns it (then 400 naming key_sha256). */
async function claimHash(redis: RedisClient, hash: string, id: string): Promise<void> {
  const pointer = redisKeys.byHash(hash);
  await retryCompareAndSet(async () => {
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
    return (await compareAndSetIn(redis, pointer, owner, id)) ? true : LOST;
  });
}

/**
 * How a key record and its hash pointers are written without a transaction (a record and the
 * pointers of its hashes live in different Redis Cluster slots, so MULTI cannot span them).
 *
 * The record decides: a value authenticates only when its pointer leads to a record that is itself
 * still listing that hash as live (current, or previous within its grace) — the key store checks
 * this on every read. The record is written by one single-key compare-and-set, so a change of
 * status, current hash or grace takes effect at one instant, and two writers cannot both commit
 * from the same version. Pointers are only an index: new ones are claimed BEFORE the record names
 * them (so a new value works as soon as the record says so) and stale ones removed AFTER the
 * record stopped naming them. Whatever step a writer dies at, a pointer is at worst left leading to
 * a record that does not list it, which authenticates nothing; no step can make a paused, revoked,
 * rolled-away or unknown value usable.
 */
export function createRecordWrites(redis: RedisClient) {
  const compareAndSet = (key: string, expected: string | null, next: string | null): Promise<boolean> => compareAndSetIn(redis, key, expected, next);


  /**
   * Removes the pointers of `hashes` that still lead to `id`. Only those: once the record stopped
   * naming a hash, another writer may claim its pointer (claimHash above) before this runs.
   */
  async function releaseHashes(hashes: readonly string[], id: string): Promise<void> {
    for (const hash of hashes) await compareAndSet(redisKeys.byHash(hash), id, null);
  }

  /** The pointers' tidying after a committed change (also run by a writer that finds its change committed by a re-sent command). */
  async function tidy(before: StoredKey | undefined, after: StoredKey): Promise<void> {
    if (after.previous_key_sha256 && after.previous_expires_at !== undefined && after.previous_key_sha256 !== before?.previous_key_sha256) {
      // Tidiness only: the record's grace ends the old value's use, cached or not.
      await redis.pexpireat(redisKeys.byHash(after.previous_key_sha256), after.previous_expires_at);
    }
    if (before) {
      const keep = new Set(liveHashes(after, Date.now()));
      await releaseHashes(liveHashes(before, Date.now()).filter((hash) => !keep.has(hash)), after.id);
    }
  }

  /** The id and the pointers of a removed record (the record decides: once it is gone they authenticate nothing). */
  async function tidyRemoved(stored: StoredKey): Promise<void> {
    await redis.srem(redisKeys.ids, stored.id);
    await releaseHashes(liveHashes(stored, 0), stored.id);
  }

  return {
    /**
     * Writes `after` in place of `before` (undefined: the id is new): claims `after`'s hashes, swaps
     * the record if nobody changed it meanwhile, then tidies pointers. `json` is the value written
     * (the record, and what the store keeps with it: record-envelope.ts). False: another writer got
     * there first; read again and retry.
     */
    async commit(before: { stored?: StoredKey; json: string | null }, after: StoredKey, json = JSON.stringify(after)): Promise<boolean> {
      // The current value's pointer, always (it also repairs one a crashed writer never made).
      await claimHash(redis, after.key_sha256, after.id);
      await redis.sadd(redisKeys.ids, after.id); // before the record: a listed id without a record is skipped
      // The account's key index, before the record too: readers check each record (gateway/accounts/).
      if (after.account !== undefined) await redis.sadd(redisKeys.accountKeys(after.account), after.id);
      if (!(await compareAndSet(redisKeys.record(after.id), before.json, json))) return false;
      await tidy(before.stored, after);
      return true;
    },
    /**
     * Replaces the record `before` by `json` (null: nothing; else a tombstone) if nobody changed it
     * meanwhile, then removes its id and its pointers. False: another writer got there first.
     */
    async remove(before: { stored: StoredKey; json: string }, json: string | null = null): Promise<boolean> {
      if (!(await compareAndSet(redisKeys.record(before.stored.id), before.json, json))) return false;
      await tidyRemoved(before.stored);
      return true;
    },
    tidy,
    tidyRemoved,
  };
}
