import type { Limits, TierName } from '../config/gateway-config';

export type KeyStatus = 'active' | 'paused' | 'revoked';
export type PauseReason = 'unpaid_renewal' | 'payment_dispute';

/** A key record as the gateway uses it: validated, normalised and frozen at load time. */
export interface KeyRecord {
  readonly id: string;
  readonly keySha256: string;
  readonly tier: TierName;
  /** Upper-case alpha-2 codes. */
  readonly countries: ReadonlySet<string>;
  /** Normalised address (IPv4-mapped IPv6 written as IPv4, IPv6 in RFC 5952 form). */
  readonly address: string;
  readonly status: KeyStatus;
  readonly pauseReason?: PauseReason;
  /** Effective limits: the tier's defaults with the key's own overrides applied. */
  readonly limits: Limits;
}

/** The outcome of looking a key up: a value, never an exception (a store failure is its own variant). */
export type KeyLookup =
  /** `previous`: the value is the previous one of a roll, still in its grace. */
  | { readonly kind: 'found'; readonly record: KeyRecord; readonly previous?: true }
  /** `keyId` and `reason` when the store still knows whose value it was (logged only, never answered). */
  | { readonly kind: 'not_found'; readonly keyId?: string; readonly reason?: 'expired_grace' }
  | { readonly kind: 'unavailable' };

/** Where key records live. The YAML file store is the embedded default. */
export interface KeyStore {
  lookup(keySha256: string): KeyLookup | Promise<KeyLookup>;
}
