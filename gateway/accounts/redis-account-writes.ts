import { ApiError } from '../errors';
import type { RedisClient } from '../redis/connect';
import { parseStoredKey, redisKeys } from '../keys/redis-layout';
import type { Account } from './account';
import { emailTaken } from './memory-account-store';
import { COMPARE_AND_SET, parseStoredAccount, toStoredJson } from './redis-account-layout';

export const concurrent = (): ApiError => new ApiError('service_unavailable', {}, 1, 'The account is being changed concurrently; retry.');

/**
 * The single-key steps of account writes: a compare-and-set of the record, and the email pointers
 * claimed before the record names an address and released after it stopped (the record decides:
 * a pointer whose account no longer lists the address leads nowhere and is taken over).
 */
export function createAccountWrites(redis: RedisClient) {
  const cas = async (key: string, expected: string | null, next: string | null): Promise<boolean> =>
    (await redis.eval(COMPARE_AND_SET, 1, key, expected ?? '', next ?? '')) === 1;
  const get = async (id: string): Promise<Account | undefined> => parseStoredAccount(await redis.get(redisKeys.account(id)));

  /** Points each address at `id`, or 409 when an account that still lists it owns it. */
  async function claimEmails(emails: readonly string[], id: string): Promise<void> {
    for (const email of emails) {
      const pointer = redisKeys.accountByEmail(email);
      for (let attempt = 0; ; attempt++) {
        if (attempt === 10) throw concurrent();
        if ((await redis.set(pointer, id, 'NX')) === 'OK') break;
        const owner = await redis.get(pointer);
        if (owner === null) continue;
        if (owner === id) break;
        if ((await get(owner))?.emails.includes(email)) throw emailTaken(email, owner);
        if (await cas(pointer, owner, id)) break;
      }
    }
  }
  /** Removes the pointers of `emails` that still lead to `id`. */
  const releaseEmails = async (emails: readonly string[], id: string): Promise<void> => {
    for (const email of emails) await cas(redisKeys.accountByEmail(email), id, null);
  };
  /**
   * Replaces the record of `id` with `make(before)` (before: undefined when absent; `make` may
   * throw to refuse), retried when another writer got there first. Returns both versions.
   */
  async function swap(id: string, make: (before: Account | undefined) => Account): Promise<{ before?: Account; after: Account }> {
    for (let attempt = 0; attempt < 10; attempt++) {
      const json = await redis.get(redisKeys.account(id));
      const before = parseStoredAccount(json);
      const after = make(before);
      await claimEmails(after.emails, id);
      await redis.zadd(redisKeys.accounts, 0, id); // before the record: a listed id without a record is skipped
      if (!(await cas(redisKeys.account(id), json, toStoredJson(after)))) continue;
      if (before) await releaseEmails(before.emails.filter((e) => !after.emails.includes(e)), id);
      return { ...(before ? { before } : {}), after };
    }
    throw concurrent();
  }
  return { cas, get, claimEmails, releaseEmails, swap };
}

/** Ids of the keys whose record names the account (the index is a superset: each record is checked). */
export async function accountKeyIds(redis: RedisClient, accountId: string): Promise<string[]> {
  const ids = (await redis.smembers(redisKeys.accountKeys(accountId))).sort();
  const records = await Promise.all(ids.map((id) => redis.get(redisKeys.record(id))));
  return ids.filter((_id, i) => parseStoredKey(records[i]!)?.account === accountId);
}
