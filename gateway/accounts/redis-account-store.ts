import type { Logger } from 'pino';
import type { RedisClient } from '../redis/connect';
import type { AuditOutbox } from '../audit/audit-outbox';
import { ApiError } from '../errors';
import { redisKeys } from '../keys/redis-layout';
import { keyStoreOutbox } from '../keys/key-store-outbox';
import { accountChangeNeedsAdmin, refuseUnlessAdmin } from '../keys/change-role';
import { accountChanges, applyPatch, checkAccountInput, checkAccountPatch, unknownAccount, type Account } from './account';
import type { AccountStore } from './account-store';
import { emailKey } from './email-address';
import { checkPageLimit } from '../http/list-query';
import { decodeAccountCursor, encodeAccountCursor } from './account-page';
import { accountKeyIds, createAccountWrites } from './redis-account-writes';

/**
 * Accounts in the Redis key store, beside the keys: the record under `lgw:account:<id>`, the ids in
 * a sorted set (listed in id order by ZRANGE BYLEX), and one `lgw:account-email:<address>` pointer
 * per address, and one set of account ids per billing customer (customer-index.ts). As with key hashes (gateway/keys/key-pointers.ts), the record decides: pointers are
 * claimed before the record names an address and released after it stopped, and every reader
 * checks the record, so a writer dying half-way leaves at worst a pointer that leads nowhere.
 * Single-key commands only, so it runs on any topology. Each change and its audit entry are one
 * compare-and-set of the record (gateway/audit/audited-write.ts): in the log exactly once.
 */
export interface RedisAccountStore extends AccountStore {
  /**
   * Writes an account as it is, times included (`keys import` of an export: exact round trip);
   * creates it or replaces the one with its id. Audited as `account.create` or `account.update`.
   */
  restore(account: Account): Promise<'created' | 'replaced'>;
}

export function createRedisAccountStore(redis: RedisClient, outbox: AuditOutbox = keyStoreOutbox(redis), logger?: Logger): RedisAccountStore {
  const { get, swap, remove, idsOfBillingCustomer } = createAccountWrites(redis, outbox, logger);
  const keyIdsOf = (accountId: string): Promise<string[]> => accountKeyIds(redis, accountId);
  const taken = (id: string): ApiError => new ApiError('conflict', {}, undefined, `An account with id "${id}" already exists.`);
  return {
    writable: true,
    get,
    async findByEmail(email) {
      const address = emailKey(email);
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
    idsOfBillingCustomer,
    keyIdsOf,
    async create(input) {
      const checked = checkAccountInput(input);
      if (await get(checked.id)) throw taken(checked.id);
      const now = new Date().toISOString();
      const { after } = await swap(checked.id, (before) => {
        if (before) throw taken(checked.id);
        return { ...checked, createdAt: now, updatedAt: now };
      }, (_before, created) => ({ action: 'account.create', changes: accountChanges(undefined, created) }));
      return after;
    },
    async update(id, patch, may = { issue: true }) {
      const checked = checkAccountPatch(patch);
      const { after } = await swap(id, (current) => {
        if (!current) throw unknownAccount(id);
        const next = applyPatch(current, checked);
        refuseUnlessAdmin(may, accountChangeNeedsAdmin(current, next));
        return next;
      }, (before, updated) => {
        const changes = accountChanges(before, updated);
        return Object.keys(changes).length ? { action: 'account.update', changes } : undefined;
      });
      return after;
    },
    async restore(account) {
      const checked = checkAccountInput({ ...account, emails: [...account.emails] });
      const { before } = await swap(checked.id, () => ({ ...checked, createdAt: account.createdAt, updatedAt: account.updatedAt }),
        (was, restored) => ({ action: was ? 'account.update' : 'account.create', changes: accountChanges(was, restored) }));
      return before ? 'replaced' : 'created';
    },
    async delete(id) {
      await remove(id, async (before) => {
        if (!before) throw unknownAccount(id);
        const keys = await keyIdsOf(id);
        if (keys.length) throw new ApiError('conflict', {}, undefined, `Account "${id}" is named by ${keys.length} key(s) (${keys.slice(0, 5).join(', ')}): move or delete them first.`);
        return before;
      }, (before) => ({ action: 'account.delete', changes: accountChanges(before, undefined) }));
    },
  };
}
