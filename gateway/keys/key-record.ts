// gateway/keys/: API keys: records, the keys file and the Redis store, key format and hashing, address
// matching, demo keys, and key administration (changes, audit outbox, export and import).
import type { Limits, TierName } from '../config/gateway-config';
import type { AddressMatcher } from './address-list';
import type { PauseReason } from './pause-reasons';

export type { PauseReason } from './pause-reasons';

export type KeyStatus = 'active' | 'paused' | 'revoked';

/** A key record as the gateway uses it: validated, normalised and frozen at load time. */
export interface KeyRecord {
  readonly id: string;
  readonly keySha256: string;
  readonly tier: TierName;
  /** Upper-case alpha-2 codes. */
  readonly countries: ReadonlySet<string>;
  /** The addresses and ranges the key may be used from, precomputed for matching. */
  readonly addresses: AddressMatcher;
  /** The same addresses and ranges as written (normalised), for operators' views. */
  readonly addressList: readonly string[];
  /** From this instant (ms) on the key is refused with 401. */
  readonly expiresAt?: number;
  readonly status: KeyStatus;
  /** Why a paused key is paused: each reason once, sorted (absent when there is none). */
  readonly pauseReasons?: readonly PauseReason[];
  /** Effective limits: the tier's defaults with the key's own overrides applied. */
  readonly limits: Limits;
}

/** The outcome of looking a key up: a value, never an exception (a store failure is its own variant). */
export type KeyLookup =
  /** `previous`: the value is the previous one of a roll, still in its grace. */
  | { readonly kind: 'found'; readonly record: KeyRecord; readonly previous?: true }
  /** `keyId` and `reason` when the store still knows whose value it was (logged only, never answered). */
  | { readonly kind: 'not_found'; readonly keyId?: string; readonly reason?: 'expired_grace' | 'value_ended' }
  | { readonly kind: 'unavailable' };

/** Where key records live. The YAML file store is the embedded default. */
export interface KeyStore {
  lookup(keySha256: string): KeyLookup | Promise<KeyLookup>;
  /**
   * The record when this process already holds the hash as a found key (the file's map, the Redis
   * store's cache), answered synchronously, never a round trip; undefined otherwise. Lets an address
   * over its budget of refused authentications still use its valid keys.
   */
  known?(keySha256: string): KeyRecord | undefined;
}
