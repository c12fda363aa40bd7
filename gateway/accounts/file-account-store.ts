import { statSync } from 'node:fs';
import type { Logger } from 'pino';
import type { AccountStore } from './account-store';
import { readKeysFileAccounts, type KeysFileAccounts } from './keys-file-accounts';
import { createMemoryAccountStore } from './memory-account-store';

/** The keys-file store also tells which account a key names (keys-file records do not carry it). */
export interface FileAccountStore extends AccountStore {
  accountOfKey(keyId: string): Promise<string | undefined>;
}

/**
 * Accounts from the keys file's `accounts:` list: read-only (every change is 400; the file is the
 * source, as for its keys). Read at start-up (`initial`, so a bad list stops start-up with one
 * line), then again whenever the file's modification time or size changed; a file that no longer
 * passes keeps the accounts last read, with a warning (as a keys reload does).
 */
export function createFileAccountStore(file: string, initial: KeysFileAccounts = readKeysFileAccounts(file), logger?: Logger): FileAccountStore {
  let current = initial;
  let stamp = stampOf(file);
  let store = build(current);
  function build(loaded: KeysFileAccounts): AccountStore {
    const byAccount = new Map<string, string[]>();
    for (const [key, account] of loaded.keyAccounts) byAccount.set(account, [...(byAccount.get(account) ?? []), key]);
    return createMemoryAccountStore({ accounts: loaded.accounts, writable: false, keyIdsOf: (id) => byAccount.get(id) ?? [] });
  }
  const fresh = (): AccountStore => {
    const now = stampOf(file);
    if (now === stamp) return store;
    stamp = now;
    try {
      current = readKeysFileAccounts(file);
      store = build(current);
    } catch (err) {
      logger?.warn({ err: (err as Error).message }, 'keys file accounts not reloaded; keeping the accounts last read');
    }
    return store;
  };
  return {
    writable: false,
    get: (id) => fresh().get(id),
    findByEmail: (email) => fresh().findByEmail(email),
    list: (page) => fresh().list(page),
    idsOfBillingCustomer: (customer) => fresh().idsOfBillingCustomer(customer),
    keyIdsOf: (id) => fresh().keyIdsOf(id),
    create: (input) => fresh().create(input),
    update: (id, patch, may) => fresh().update(id, patch, may),
    delete: (id) => fresh().delete(id),
    accountOfKey: async (keyId) => {
      fresh();
      return current.keyAccounts.get(keyId);
    },
  };
}

function stampOf(file: string): string {
  try {
    const s = statSync(file);
    return `${s.mtimeMs}:${s.size}`;
  } catch {
    return 'missing';
  }
}
