import { readFileSync } from 'node:fs';
import { CORE_SCHEMA, load } from 'js-yaml';
import { z } from 'zod';
import { ConfigError, formatIssuePath } from '../config/config-error';
import { AccountFields, normaliseEmails, type Account } from './account';

/** An entry of the keys file's `accounts:` list (an export adds its times, which import keeps). */
export const AccountEntrySchema = AccountFields.extend({
  created_at: z.string().datetime({ offset: true, message: 'must be an RFC 3339 date-time, e.g. 2026-01-31T00:00:00Z' }).optional(),
  updated_at: z.string().datetime({ offset: true, message: 'must be an RFC 3339 date-time, e.g. 2026-01-31T00:00:00Z' }).optional(),
}).strict();
export type AccountEntry = z.infer<typeof AccountEntrySchema>;

/** `accounts:` or `account:` anywhere (block or flow style, quoted or not). */
const MENTIONS_ACCOUNT = /accounts?["']?\s*:/;

/** The accounts of a keys file and which account each key names. */
export interface KeysFileAccounts {
  readonly accounts: Account[];
  /** Key id → account id, for the keys that name one. */
  readonly keyAccounts: Map<string, string>;
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

export const accountFromEntry = (e: AccountEntry): Account => ({
  id: e.id,
  name: e.name,
  emails: normaliseEmails(e.emails),
  ...(e.billing_customer !== undefined ? { billingCustomer: e.billing_customer } : {}),
  createdAt: e.created_at ?? '',
  updatedAt: e.updated_at ?? e.created_at ?? '',
});

/**
 * Checks a parsed keys file's `accounts:` list and the `account` of its keys; throws a one-line
 * `ConfigError` naming the file, the entry and the field: a malformed entry, a duplicate id, an
 * address two accounts list, a key naming an account the list does not hold.
 */
export function checkKeysFileAccounts(file: string, raw: unknown, checkKeys = true): KeysFileAccounts {
  const doc = isRecord(raw) ? raw : {};
  const list = doc.accounts ?? [];
  if (!Array.isArray(list)) throw new ConfigError(`${file}: accounts: must be a list of accounts`);
  const accounts: Account[] = [];
  const owners = new Map<string, string>();
  list.forEach((item, index) => {
    const named = isRecord(item) && typeof item.id === 'string' ? ` (id ${item.id})` : '';
    const parsed = AccountEntrySchema.safeParse(item);
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      throw new ConfigError(`${file}: accounts[${index}]${named}${issue.path.length ? `: field "${formatIssuePath(issue.path)}"` : ''}: ${issue.message}`);
    }
    const account = accountFromEntry(parsed.data);
    if (accounts.some((a) => a.id === account.id)) throw new ConfigError(`${file}: accounts[${index}]${named}: field "id": duplicate id`);
    account.emails.forEach((email, i) => {
      const owner = owners.get(email);
      if (owner !== undefined && owner !== account.id) throw new ConfigError(`${file}: accounts[${index}]${named}: field "emails[${i}]": ${email} is already account ${owner}'s`);
      owners.set(email, account.id);
    });
    accounts.push(account);
  });
  const known = new Set(accounts.map((a) => a.id));
  const keyAccounts = new Map<string, string>();
  const keys = Array.isArray(doc.keys) ? doc.keys : [];
  keys.forEach((key: unknown, index) => {
    if (!checkKeys || !isRecord(key) || key.account === undefined) return;
    const id = typeof key.id === 'string' ? key.id : '';
    if (typeof key.account !== 'string' || !known.has(key.account)) {
      throw new ConfigError(`${file}: keys[${index}]${id ? ` (id ${id})` : ''}: field "account": no account "${String(key.account)}" in the file's accounts list`);
    }
    keyAccounts.set(id, key.account);
  });
  return { accounts, keyAccounts };
}

/**
 * Reads a keys file and checks its accounts (see checkKeysFileAccounts). `checkKeys: false` (an
 * import into Redis, where keys may name accounts the store already holds) checks the list alone.
 */
export function readKeysFileAccounts(file: string, checkKeys = true): KeysFileAccounts {
  let raw: unknown;
  try {
    const text = readFileSync(file, 'utf8');
    // A file that never says `account` has no accounts to check: not parsed a second time (a large
    // keys file takes seconds; its keys are read off the main thread, see keys-file-loader.ts).
    if (!MENTIONS_ACCOUNT.test(text)) return { accounts: [], keyAccounts: new Map() };
    raw = load(text, { schema: CORE_SCHEMA, filename: file });
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new ConfigError(`${file}: ${code ? `cannot be read (${code})` : `not valid YAML: ${(err as { reason?: string }).reason ?? (err as Error).message.split('\n')[0]}`}`);
  }
  return checkKeysFileAccounts(file, raw, checkKeys);
}
