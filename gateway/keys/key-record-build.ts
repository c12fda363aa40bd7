import { toLimits, type GatewayConfig, type Limits } from '../config/gateway-config';
import { addressMatcher } from './address-list';
import { addressesOf, type KeyEntry } from './key-entry';
import type { KeyRecord } from './key-record';
import { pauseReasonsOf, type PauseReason } from './pause-reasons';

/**
 * Parts many records hold alike (the same countries, the same limits), made once and shared: with
 * 100,000 keys, a set and a limits object per key were a large part of the keys file's memory.
 * Both are read-only (a ReadonlySet, a frozen object).
 */
export interface SharedRecordParts {
  readonly countries: Map<string, ReadonlySet<string>>;
  readonly limits: Map<string, Limits>;
  /** One string per distinct value of the short repeated fields (address, tier, status). */
  readonly strings: Map<string, string>;
  /** One frozen list per distinct set of pause reasons. */
  readonly reasons: Map<string, readonly PauseReason[]>;
}
export const sharedRecordParts = (): SharedRecordParts => ({ countries: new Map(), limits: new Map(), strings: new Map(), reasons: new Map() });

/** A record's pause reasons (a set of one for an entry with the single `pause_reason`), shared when `shared` is given. */
function reasonsOf(entry: KeyEntry, shared: SharedRecordParts | undefined): readonly PauseReason[] | undefined {
  if (entry.pause_reasons === undefined && entry.pause_reason === undefined) return undefined;
  const reasons = pauseReasonsOf(entry);
  if (!reasons.length) return undefined;
  if (!shared) return Object.freeze(reasons);
  const key = reasons.join(',');
  const known = shared.reasons.get(key) ?? Object.freeze(reasons);
  shared.reasons.set(key, known);
  return known;
}

function sharedString<T extends string>(shared: SharedRecordParts, value: T): T {
  const known = shared.strings.get(value);
  if (known !== undefined) return known as T;
  shared.strings.set(value, value);
  return value;
}

/** Turns a validated entry into the record the gateway uses, applying the tier's default limits. */
export function toKeyRecord(entry: KeyEntry, config: GatewayConfig, shared?: SharedRecordParts): KeyRecord {
  const tierLimits = config.tiers[entry.tier];
  const perMinute = entry.limits?.per_minute ?? tierLimits.perMinute;
  const perDay = entry.limits?.per_day ?? tierLimits.perDay;
  const perMonth = entry.limits?.per_month ?? tierLimits.perMonth;
  const makeLimits = (): Limits => toLimits({ per_minute: perMinute, per_day: perDay, per_month: perMonth });
  let countries: ReadonlySet<string>;
  let limits: Limits;
  if (shared) {
    const countriesKey = entry.countries.join(',');
    countries = shared.countries.get(countriesKey) ?? new Set(entry.countries);
    shared.countries.set(countriesKey, countries);
    const limitsKey = `${perMinute}/${perDay}/${perMonth}`;
    limits = shared.limits.get(limitsKey) ?? makeLimits();
    shared.limits.set(limitsKey, limits);
  } else {
    countries = new Set(entry.countries);
    limits = makeLimits();
  }
  const pauseReasons = reasonsOf(entry, shared);
  return Object.freeze({
    id: entry.id,
    keySha256: entry.key_sha256,
    tier: shared ? sharedString(shared, entry.tier) : entry.tier,
    countries,
    addresses: addressMatcher(addressesOf(entry)),
    addressList: addressesOf(entry),
    status: shared ? sharedString(shared, entry.status) : entry.status,
    ...(entry.expires_at !== undefined ? { expiresAt: Date.parse(entry.expires_at) } : {}),
    ...(pauseReasons ? { pauseReasons } : {}),
    limits,
  });
}

/** A record and, during a rotation, the previous hash that still authenticates until `expiresAt` (ms). */
export interface FileKey {
  readonly record: KeyRecord;
  readonly previous?: { readonly keySha256: string; readonly expiresAt: number };
  /** Values ended after a leak (a restored export): refused, the log saying whose they were. */
  readonly ended?: readonly string[];
}

/** Checked entries as the records the gateway uses. */
export const toFileKeys = (entries: readonly KeyEntry[], config: GatewayConfig, shared = sharedRecordParts()): FileKey[] =>
  entries.map((entry) => ({
    record: toKeyRecord(entry, config, shared),
    ...(entry.previous_key_sha256 && entry.previous_key_expires_at
      ? { previous: { keySha256: entry.previous_key_sha256, expiresAt: Date.parse(entry.previous_key_expires_at) } }
      : {}),
    ...(entry.value_ended_at !== undefined && entry.leaked_key_sha256 ? { ended: entry.leaked_key_sha256 } : {}),
  }));
