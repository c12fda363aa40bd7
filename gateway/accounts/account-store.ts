import type { Account, AccountCreateInput, AccountPatch } from './account';

/** One page of accounts, ordered by id; `nextCursor` null on the last. */
export interface AccountPage {
  accounts: Account[];
  nextCursor: string | null;
}

/**
 * Where accounts live: beside the keys (Redis, or the keys file's `accounts:` list, read-only).
 * Changes are audited under the current actor (gateway/audit/actor.ts runAs): `account.create`,
 * `account.update`, `account.delete`. Bad input is 400 `invalid_parameter` naming the field; an
 * unknown id 404 `not_found`; a change to a read-only store 400 `invalid_parameter`.
 */
export interface AccountStore {
  /** False for the keys-file store (the portal and the console are then read-only for accounts). */
  readonly writable: boolean;
  get(id: string): Promise<Account | undefined>;
  /** By the one comparison rule (email-address.ts): ASCII letters in any case, every other character exactly. */
  findByEmail(email: string): Promise<Account | undefined>;
  /** `limit` 1..1000; `cursor` is a previous page's `nextCursor`. */
  list(page: { limit: number; cursor?: string }): Promise<AccountPage>;
  /** Ids of the accounts whose `billing_customer` is `customer` (normally one), sorted: what a billing event is matched to. */
  idsOfBillingCustomer(customer: string): Promise<string[]>;
  /** Ids of the key records whose `account` is this id, sorted. */
  keyIdsOf(accountId: string): Promise<string[]>;
  /** A duplicate id, or an email already another account's, is 409 `conflict`. */
  create(input: AccountCreateInput): Promise<Account>;
  /**
   * Adding an address to `emails` is an issuing act (gateway/keys/change-role.ts): 403 `forbidden`
   * unless `may.issue` (the admin role; true when not given), decided on the record the change replaces.
   */
  update(id: string, patch: AccountPatch, may?: { issue: boolean }): Promise<Account>;
  /** Refused with 409 `conflict` while a key names the account. */
  delete(id: string): Promise<void>;
}
