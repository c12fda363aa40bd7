import { accountView, type AccountView } from './account';
import type { AccountStore } from './account-store';
import { readKeysFileAccounts } from './keys-file-accounts';
import type { RedisAccountStore } from './redis-account-store';

/** Every account, by id, as the keys file's `accounts:` list writes them (times included). */
export async function exportAccounts(store: AccountStore): Promise<AccountView[]> {
  const out: AccountView[] = [];
  let cursor: string | undefined;
  do {
    const page = await store.list({ limit: 1000, ...(cursor !== undefined ? { cursor } : {}) });
    out.push(...page.accounts.map(accountView));
    cursor = page.nextCursor ?? undefined;
  } while (cursor !== undefined);
  return out;
}

/**
 * The `accounts:` list of a keys file into the Redis store (before its keys, which may name them):
 * each created or replaced as written. `validateRest` runs after the list was checked and before
 * anything is written (the keys' own checks), so a bad file writes nothing. Returns the ids.
 */
export async function importAccounts(store: RedisAccountStore, file: string, validateRest: () => void = () => undefined): Promise<string[]> {
  const { accounts } = readKeysFileAccounts(file, false);
  if (accounts.length) validateRest();
  const now = new Date().toISOString();
  for (const account of accounts) await store.restore({ ...account, createdAt: account.createdAt || now, updatedAt: account.updatedAt || now });
  return accounts.map((a) => a.id);
}
