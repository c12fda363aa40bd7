import type { Logger } from 'pino';
import { ApiError } from '../errors';
import type { RedisClient } from '../redis/connect';
import type { AuditAction, FieldChange } from '../audit/audit-entry';
import type { AuditOutbox } from '../audit/audit-outbox';
import { auditedWrite } from '../audit/audited-write';
import { compareAndSet } from '../redis/compare-and-set';
import { parseStoredKey, redisKeys } from '../keys/redis-layout';
import type { Account } from './account';
import { emailTaken } from './memory-account-store';
import { parseStoredAccount, toStoredAccount } from './redis-account-layout';
import { createCustomerIndex } from './customer-index';

export const concurrent = (): ApiError => new ApiError('service_unavailable', {}, 1, 'The account is being changed concurrently; retry.');

/** What an account change's audit entry says (none: nothing visible changed). */
export type AccountAudit = { action: AuditAction; changes: Record<string, FieldChange> } | undefined;

/**
 * The single-key steps of account writes: a compare-and-set of the record carrying its audit entry
 * (gateway/audit/audited-write.ts: the change and its entry are one atomic step), and the email
 * pointers claimed before the record names an address and released after it stopped (the record
 * decides: a pointer whose account no longer lists the address leads nowhere and is taken over).
 */
export function createAccountWrites(redis: RedisClient, outbox: AuditOutbox, logger?: Logger) {
  const cas = (key: string, expected: string | null, next: string | null): Promise<boolean> => compareAndSet(redis, key, expected, next);
  const get = async (id: string): Promise<Account | undefined> => parseStoredAccount(await redis.get(redisKeys.account(id)));
  const customers = createCustomerIndex(redis, get);
  const entryOf = (id: string, audit: AccountAudit) => (audit ? { entry: { action: audit.action, key_id: '', account_id: id, changes: audit.changes } } : {});

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
   * throw to refuse), with the entry `audit` says, retried when another writer got there first.
   */
  async function swap(id: string, make: (before: Account | undefined) => Account, audit: (before: Account | undefined, after: Account) => AccountAudit): Promise<{ before?: Account; after: Account }> {
    const { planned } = await auditedWrite(redis, outbox, redisKeys.account(id), {
      plan: ({ json }) => {
        const before = parseStoredAccount(json);
        const after = make(before);
        return { before, after, next: toStoredAccount(after), ...entryOf(id, audit(before, after)) };
      },
      prepare: async ({ after }) => {
        await claimEmails(after.emails, id);
        await customers.join(after);
        await redis.zadd(redisKeys.accounts, 0, id); // before the record: a listed id without a record is skipped
      },
      giveUp: concurrent,
      logger,
    });
    const { before, after } = planned;
    if (before) await releaseEmails(before.emails.filter((e) => !after.emails.includes(e)), id);
    await customers.leave(before, after);
    return { ...(before ? { before } : {}), after };
  }
  /** Deletes the account `id` after `check` accepted it (it throws to refuse), with the entry `audit` says. */
  async function remove(id: string, check: (before: Account | undefined) => Promise<Account>, audit: (before: Account) => AccountAudit): Promise<Account> {
    const { planned } = await auditedWrite(redis, outbox, redisKeys.account(id), {
      plan: async ({ json }) => {
        const before = await check(parseStoredAccount(json));
        return { before, next: undefined, ...entryOf(id, audit(before)) };
      },
      giveUp: concurrent,
      logger,
    });
    await redis.zrem(redisKeys.accounts, id);
    await releaseEmails(planned.before.emails, id);
    await customers.leave(planned.before, undefined);
    return planned.before;
  }
  return { get, releaseEmails, swap, remove, idsOfBillingCustomer: customers.idsOf };
}

/** Ids of the keys whose record names the account (the index is a superset: each record is checked). */
export async function accountKeyIds(redis: RedisClient, accountId: string): Promise<string[]> {
  const ids = (await redis.smembers(redisKeys.accountKeys(accountId))).sort();
  const records = await Promise.all(ids.map((id) => redis.get(redisKeys.record(id))));
  return ids.filter((_id, i) => parseStoredKey(records[i]!)?.account === accountId);
}
