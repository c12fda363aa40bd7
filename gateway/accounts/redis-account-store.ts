import type { RedisClient } from '../redis/connect';
import { ApiError } from '../errors';
import { parseStoredKey, redisKeys } from '../keys/redis-layout';
import { accountChanges, checkAccountInput, checkAccountPatch, unknownAccount, type Account } from './account';
import type { AccountStore } from './account-store';
import { checkPageLimit, decodeAccountCursor, encodeAccountCursor } from './account-page';
import { noAudit, type ChangeAudit } from './change-audit';
import { emailTaken } from './memory-account-store';
import { COMPARE_AND_SET, parseStoredAccount, toStoredJson } from './redis-account-layout';

const concurrent = (): ApiError => new ApiError('service_unavailable', {}, 1, 'The account is being changed concurrently; retry.');

/**
 * Accounts in the Redis key store, beside the keys: the record under `lgw:account:<id>`, the ids in
 * a sorted set (listed in id order by ZRANGE BYLEX), and one `lgw:account-email:<address>` pointer
 * per address. As with key hashes (gateway/keys/record-writes.ts), the record decides: pointers are
 * claimed before the record names an address and released after it stopped, and every reader
 * checks the record, so a writer dying half-way leaves at worst a pointer that leads nowhere.
 * Single-key commands only, so it runs on any topology.
 */
export interface RedisAccountStore extends AccountStore {
  /**
   * Writes an account as it is, times included (`keys import` of an export: exact round trip);
   * creates it or replaces the one with its id. Audited as `account.create` or `account.update`.
   */
  restore(account: Account): Promise<'created' | 'replaced'>;
}

export function createRedisAccountStore(redis: RedisClient, options: { audit?: ChangeAudit } = {}): RedisAccountStore {
  const audit = options.audit ?? noAudit;
  const cas = async (key: string, expected: string | null, next: string | null): Promise<boolean> =>
    (await redis.eval(COMPARE_AND_SET, 1, key, expected ?? '', next ?? '')) === 1;

  async function get(id: string): Promise<Account | undefined> {
    return parseStoredAccount(await redis.get(redisKeys.account(id)));
  }
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
  const releaseEmails = async (emails: readonly string[], id: string): Promise<void> => {
    for (const email of emails) await cas(redisKeys.accountByEmail(email), id, null);
  };

  async function keyIdsOf(accountId: string): Promise<string[]> {
    const ids = (await redis.smembers(redisKeys.accountKeys(accountId))).sort();
    const records = await Promise.all(ids.map((id) => redis.get(redisKeys.record(id))));
    return ids.filter((_id, i) => parseStoredKey(records[i]!)?.account === accountId);
  }

  return {
    writable: true,
    get,
    async findByEmail(email) {
      const address = email.trim().toLowerCase();
      const id = await redis.get(redisKeys.accountByEmail(address));
      if (id === null) return undefined;
      const account = await get(id);
      return account?.emails.includes(address) ? account : undefined;
    },
    async list({ limit, cursor }) {
      checkPageLimit(limit);
      const min = cursor === undefined ? '-' : `(${decodeAccountCursor(cursor)}`;
      const ids = await redis.zrangebylex(redisKeys.accounts, min, '+', 'LIMIT', 0, limit + 1);
      const page = ids.slice(0, limit);
      const accounts = (await Promise.all(page.map(get))).filter((a): a is Account => a !== undefined);
      return { accounts, nextCursor: ids.length > limit ? encodeAccountCursor(page[page.length - 1]!) : null };
    },
    keyIdsOf,
    async create(input) {
      const checked = checkAccountInput(input);
      if (await redis.exists(redisKeys.account(checked.id))) throw new ApiError('conflict', {}, undefined, `An account with id "${checked.id}" already exists.`);
      await claimEmails(checked.emails, checked.id);
      const now = new Date().toISOString();
      const account: Account = { ...checked, createdAt: now, updatedAt: now };
      await redis.zadd(redisKeys.accounts, 0, account.id); // before the record: a listed id without a record is skipped
      if (!(await cas(redisKeys.account(account.id), null, toStoredJson(account)))) {
        throw new ApiError('conflict', {}, undefined, `An account with id "${checked.id}" already exists.`);
      }
      await audit('account.create', { accountId: account.id }, accountChanges(undefined, account));
      return account;
    },
    async update(id, patch) {
      const checked = checkAccountPatch(patch);
      for (let attempt = 0; attempt < 10; attempt++) {
        const json = await redis.get(redisKeys.account(id));
        const before = parseStoredAccount(json);
        if (!before) throw unknownAccount(id);
        const { billingCustomer: _b, ...rest } = before;
        const billing = checked.billingCustomer === undefined ? before.billingCustomer : (checked.billingCustomer ?? undefined);
        const after: Account = {
          ...rest,
          ...(checked.name !== undefined ? { name: checked.name } : {}),
          ...(checked.emails !== undefined ? { emails: checked.emails } : {}),
          ...(billing !== undefined ? { billingCustomer: billing } : {}),
          updatedAt: new Date().toISOString(),
        };
        await claimEmails(after.emails, id);
        if (!(await cas(redisKeys.account(id), json, toStoredJson(after)))) continue;
        await releaseEmails(before.emails.filter((e) => !after.emails.includes(e)), id);
        const changes = accountChanges(before, after);
        if (Object.keys(changes).length) await audit('account.update', { accountId: id }, changes);
        return after;
      }
      throw concurrent();
    },
    async restore(account) {
      const checked = checkAccountInput({ ...account, emails: [...account.emails] });
      const restored: Account = { ...checked, createdAt: account.createdAt, updatedAt: account.updatedAt };
      for (let attempt = 0; attempt < 10; attempt++) {
        const json = await redis.get(redisKeys.account(restored.id));
        const before = parseStoredAccount(json);
        await claimEmails(restored.emails, restored.id);
        await redis.zadd(redisKeys.accounts, 0, restored.id);
        if (!(await cas(redisKeys.account(restored.id), json, toStoredJson(restored)))) continue;
        if (before) await releaseEmails(before.emails.filter((e) => !restored.emails.includes(e)), restored.id);
        await audit(before ? 'account.update' : 'account.create', { accountId: restored.id }, accountChanges(before, restored));
        return before ? 'replaced' : 'created';
      }
      throw concurrent();
    },
    async delete(id) {
      for (let attempt = 0; attempt < 10; attempt++) {
        const json = await redis.get(redisKeys.account(id));
        const before = parseStoredAccount(json);
        if (!before) throw unknownAccount(id);
        const keys = await keyIdsOf(id);
        if (keys.length) throw new ApiError('conflict', {}, undefined, `Account "${id}" is named by ${keys.length} key(s) (${keys.slice(0, 5).join(', ')}): move or delete them first.`);
        if (!(await cas(redisKeys.account(id), json, null))) continue;
        await redis.zrem(redisKeys.accounts, id);
        await releaseEmails(before.emails, id);
        await redis.del(redisKeys.accountKeys(id));
        await audit('account.delete', { accountId: id }, accountChanges(before, undefined));
        return;
      }
      throw concurrent();
    },
  };
}
