import { z } from 'zod';
import { parseStoredJson } from '../validation/stored-json';
import { KeyEntryFields } from './key-entry';

/**
 * Where the Redis key store keeps things. Records are JSON under their id; each SHA-256 that may
 * authenticate (the current one, and during a roll the previous one, with an expiry) points to the id.
 */
export const redisKeys = {
  record: (id: string) => `lgw:key:${id}`,
  byHash: (sha256: string) => `lgw:keyhash:${sha256}`,
  ids: 'lgw:keys',
  /** The key-store marker (see key-store-epoch.ts): absent when the store was lost. */
  epoch: 'lgw:keystore:epoch',
  /** Pub/sub channel: a JSON `{"hashes": [...]}` of every hash whose record changed. */
  changes: 'lgw:keys:changed',
  /**
   * Stream: the audit log of every change to the records (gateway/audit/); holders' changes (the
   * portal) go to `{lgw:audit}:portal` beside it, capped on its own (redis-audit-log.ts holderStreamOf).
   */
  audit: 'lgw:audit',
  /** Holder accounts (gateway/accounts/): the record, all ids (a sorted set, by id), email → id. */
  account: (id: string) => `lgw:account:${id}`,
  accounts: 'lgw:accounts',
  accountByEmail: (email: string) => `lgw:account-email:${email}`,
  /** Ids of the keys whose `account` is this id (a superset: readers check each record). */
  accountKeys: (id: string) => `lgw:account-keys:${id}`,
  /** Ids of the accounts whose `billing_customer` is this (a superset: readers check each record); the flag says every account written before the index existed was added. */
  customerAccounts: (customer: string) => `lgw:customer-accounts:${customer}`,
  customerAccountsBuilt: 'lgw:customer-accounts:built',
  /** Set: Redis keys of records (keys, accounts, requests) that may hold audit entries not yet in the log (gateway/audit/audit-outbox.ts). */
  auditPending: 'lgw:audit:pending',
} as const;

/** A key record as stored in Redis: the keys-file fields plus rotation and bookkeeping. */
export const StoredKeySchema = KeyEntryFields.extend({
  /**
   * Not bounded here: a record stored before the bound (record-bounds.ts) keeps authenticating.
   * Every write goes through KeyEntryFields, which is.
   */
  countries: z.array(z.string()).min(1),
  /** During a roll: the previous value's hash, accepted until `previous_expires_at` (ms). */
  previous_key_sha256: z.string().regex(/^[0-9a-f]{64}$/).optional(),
  previous_expires_at: z.number().int().optional(),
  created_at: z.string(),
  updated_at: z.string(),
});
export type StoredKey = z.infer<typeof StoredKeySchema>;

/** Parses a stored record, or undefined if it is not one (a corrupt record never authenticates). */
export const parseStoredKey = (json: string | null): StoredKey | undefined => parseStoredJson(StoredKeySchema, json);

/**
 * The hashes that authenticate for a record at `nowMs`: the live ones (below) but a value ended
 * after a leak. An ended value keeps its pointer (it is still live there), so a second report of it
 * is still recognised as this gateway's.
 */
export function authenticatingHashes(stored: StoredKey, nowMs: number): string[] {
  const live = liveHashes(stored, nowMs);
  const ended = stored.value_ended_at !== undefined ? stored.leaked_key_sha256 : undefined;
  return ended ? live.filter((hash) => !ended.includes(hash)) : live;
}

/** The hashes a record's pointers keep (current, and during a roll the previous one) at `nowMs`. */
export function liveHashes(stored: StoredKey, nowMs: number): string[] {
  const hashes = [stored.key_sha256];
  if (stored.previous_key_sha256 && (stored.previous_expires_at ?? 0) > nowMs) hashes.push(stored.previous_key_sha256);
  return hashes;
}
