import { ApiError } from '../errors';
import { accountChangeNeedsAdmin, refuseUnlessAdmin } from '../keys/change-role';
import { accountChanges, applyPatch, checkAccountInput, checkAccountPatch, unknownAccount, type Account } from './account';
import type { AccountStore } from './account-store';
import { checkPageLimit } from '../http/list-query';
import { decodeAccountCursor, encodeAccountCursor } from './account-page';
import { noAudit, type ChangeAudit } from './change-audit';
import { emailKey } from './email-address';

export interface MemoryAccountStoreOptions {
  /** Accounts present from the start. */
  readonly accounts?: readonly Account[];
  /** Ids of the keys naming an account (the key store's; none by default). */
  readonly keyIdsOf?: (accountId: string) => Promise<string[]> | string[];
  readonly audit?: ChangeAudit;
  /** False makes every change 400 (the keys-file store is read-only). */
  readonly writable?: boolean;
}

export const readOnlyStore = (): ApiError =>
  new ApiError('invalid_parameter', { parameter: 'id' }, undefined, 'Accounts come from the keys file here: change them there (read-only).');
export const emailTaken = (email: string, owner: string): ApiError =>
  new ApiError('conflict', {}, undefined, `emails: ${email} already belongs to account "${owner}".`);

/**
 * Accounts in this process: the twin of the Redis store (tests, the embedded default) and, with
 * `writable: false`, the store of the keys file's `accounts:` list.
 */
export function createMemoryAccountStore(options: MemoryAccountStoreOptions = {}): AccountStore {
  const byId = new Map<string, Account>();
  const byEmail = new Map<string, string>();
  for (const a of options.accounts ?? []) {
    byId.set(a.id, a);
    for (const e of a.emails) byEmail.set(emailKey(e), a.id);
  }
  const writable = options.writable ?? true;
  const audit = options.audit ?? noAudit;
  const keyIdsOf = async (id: string): Promise<string[]> => [...(await (options.keyIdsOf?.(id) ?? []))].sort();
  const checkEmails = (emails: readonly string[], self: string): void => {
    for (const e of emails) {
      const owner = byEmail.get(e);
      if (owner !== undefined && owner !== self) throw emailTaken(e, owner);
    }
  };
  const mustWrite = (): void => {
    if (!writable) throw readOnlyStore();
  };
  return {
    writable,
    get: async (id) => byId.get(id),
    findByEmail: async (email) => {
      const id = byEmail.get(emailKey(email));
      return id === undefined ? undefined : byId.get(id);
    },
    async list({ limit, cursor }) {
      checkPageLimit(limit);
      const after = cursor === undefined ? undefined : decodeAccountCursor(cursor);
      const ids = [...byId.keys()].sort().filter((id) => after === undefined || id > after);
      const page = ids.slice(0, limit);
      return { accounts: page.map((id) => byId.get(id)!), nextCursor: ids.length > limit ? encodeAccountCursor(page[page.length - 1]!) : null };
    },
    idsOfBillingCustomer: async (customer) => [...byId.values()].filter((a) => a.billingCustomer === customer).map((a) => a.id).sort(),
    keyIdsOf,
    async create(input) {
      mustWrite();
      const checked = checkAccountInput(input);
      if (byId.has(checked.id)) throw new ApiError('conflict', {}, undefined, `An account with id "${checked.id}" already exists.`);
      checkEmails(checked.emails, checked.id);
      const now = new Date().toISOString();
      const account: Account = { ...checked, createdAt: now, updatedAt: now };
      byId.set(account.id, account);
      for (const e of account.emails) byEmail.set(e, account.id);
      await audit('account.create', { accountId: account.id }, accountChanges(undefined, account));
      return account;
    },
    async update(id, patch, may = { issue: true }) {
      mustWrite();
      const checked = checkAccountPatch(patch);
      const before = byId.get(id);
      if (!before) throw unknownAccount(id);
      if (checked.emails) checkEmails(checked.emails, id);
      const after = applyPatch(before, checked);
      refuseUnlessAdmin(may, accountChangeNeedsAdmin(before, after));
      for (const e of before.emails) byEmail.delete(e);
      for (const e of after.emails) byEmail.set(e, id);
      byId.set(id, after);
      const changes = accountChanges(before, after);
      if (Object.keys(changes).length) await audit('account.update', { accountId: id }, changes);
      return after;
    },
    async delete(id) {
      mustWrite();
      const before = byId.get(id);
      if (!before) throw unknownAccount(id);
      const keys = await keyIdsOf(id);
      if (keys.length) throw new ApiError('conflict', {}, undefined, `Account "${id}" is named by ${keys.length} key(s) (${keys.slice(0, 5).join(', ')}): move or delete them first.`);
      byId.delete(id);
      for (const e of before.emails) byEmail.delete(e);
      await audit('account.delete', { accountId: id }, accountChanges(before, undefined));
    },
  };
}
