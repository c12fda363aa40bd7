import { ApiError } from '../errors';
import type { RedisClient } from '../redis/connect';
import { liveHashes, parseStoredKey, redisKeys, type StoredKey } from './redis-layout';

/**
 * Sets KEYS[1] to ARGV[2] (deletes it when ARGV[2] is empty) only if it still holds ARGV[1] (empty:
 * absent). One key per call, so it runs on any topology, a Redis Cluster included.
 */
const COMPARE_AND_SET = `
local current = redis.call('GET', KEYS[1])
if (current or '') ~= ARGV[1] then return 0 end
if ARGV[2] == '' then redis.call('DEL', KEYS[1]) else redis.call('SET', KEYS[1], ARGV[2]) end
return 1
`;

const concurrent = (): ApiError => new ApiError('service_unavailable', {}, 1, 'The key is being changed concurrently; retry.');

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
  const compareAndSet = async (key: string, expected: string | null, next: string | null): Promise<boolean> =>
    (await redis.eval(COMPARE_AND_SET, 1, key, expected ?? '', next ?? '')) === 1;

  /** Points `hash` at `id`, unless a record still using it owns it (then 400 naming key_sha256). */
  async function claimHash(hash: string, id: string): Promise<void> {
    const pointer = redisKeys.byHash(hash);
    for (let attempt = 0; attempt < 10; attempt++) {
      if ((await redis.set(pointer, id, 'NX')) === 'OK') return;
      const owner = await redis.get(pointer);
      if (owner === null) continue;
      if (owner === id) {
        await redis.persist(pointer); // e.g. a previous value's pointer (with its grace expiry) made current again
        return;
      }
      const ownerRecord = parseStoredKey(await redis.get(redisKeys.record(owner)));
      if (ownerRecord && liveHashes(ownerRecord, Date.now()).includes(hash)) {
        throw new ApiError('invalid_parameter', { parameter: 'key_sha256' }, undefined, `The hash of "${id}" is already used by another key.`);
      }
      // Left by a writer that died before its record named it, or by a record since changed: take it over.
      if (await compareAndSet(pointer, owner, id)) return;
    }
    throw concurrent();
  }

  /**
   * Removes the pointers of `hashes` that still lead to `id`. Only those: once the record stopped
   * naming a hash, another writer may claim its pointer (claimHash above) before this runs.
   */
  async function releaseHashes(hashes: readonly string[], id: string): Promise<void> {
    for (const hash of hashes) await compareAndSet(redisKeys.byHash(hash), id, null);
  }

  return {
    /**
     * Writes `after` in place of `before` (undefined: the id is new): claims `after`'s hashes, swaps
     * the record if nobody changed it meanwhile, then tidies pointers. False: another writer got
     * there first; read again and retry.
     */
    async commit(before: { stored?: StoredKey; json: string | null }, after: StoredKey): Promise<boolean> {
      // The current value's pointer, always (it also repairs one a crashed writer never made).
      await claimHash(after.key_sha256, after.id);
      await redis.sadd(redisKeys.ids, after.id); // before the record: a listed id without a record is skipped
      // The account's key index, before the record too: readers check each record (gateway/accounts/).
      if (after.account !== undefined) await redis.sadd(redisKeys.accountKeys(after.account), after.id);
      if (!(await compareAndSet(redisKeys.record(after.id), before.json, JSON.stringify(after)))) return false;
      if (after.previous_key_sha256 && after.previous_expires_at !== undefined && after.previous_key_sha256 !== before.stored?.previous_key_sha256) {
        // Tidiness only: the record's grace ends the old value's use, cached or not.
        await redis.pexpireat(redisKeys.byHash(after.previous_key_sha256), after.previous_expires_at);
      }
      if (before.stored) {
        const keep = new Set(liveHashes(after, Date.now()));
        await releaseHashes(liveHashes(before.stored, Date.now()).filter((hash) => !keep.has(hash)), after.id);
      }
      return true;
    },
    /**
     * Deletes the record `before` if nobody changed it meanwhile, then its id and its pointers (the
     * record decides: once it is gone they authenticate nothing). False: another writer got there first.
     */
    async remove(before: { stored: StoredKey; json: string }): Promise<boolean> {
      const { id } = before.stored;
      if (!(await compareAndSet(redisKeys.record(id), before.json, null))) return false;
      await redis.srem(redisKeys.ids, id);
      await releaseHashes(liveHashes(before.stored, 0), id);
      return true;
    },
    concurrent,
  };
}
