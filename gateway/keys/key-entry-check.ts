import { normaliseCountry } from '../validation/iso-countries';
import { normaliseAddressEntry } from './address-list';
import type { KeyEntry } from './key-entry';
import { sortedReasons } from './pause-reasons';

/** A field that failed `checkKeyEntry`: its path inside the entry and why. */
export interface EntryIssue {
  readonly path: ReadonlyArray<string | number>;
  readonly message: string;
}

type Checked<T> = { ok: true; value: T } | { ok: false; issue: EntryIssue };

/**
 * A copy of an entry without its `address` (which checkKeyEntry turns into `addresses`). Copied
 * field by field rather than spread and `delete`d: a deleted property turns an object into a slow
 * hash table, 100,000 of them on a large keys file.
 */
function withoutAddress<T extends Partial<KeyEntry>>(entry: T): T {
  const out: Record<string, unknown> = {};
  for (const field in entry) if (field !== 'address') out[field] = entry[field];
  return out as T;
}

/** The address list normalised (each entry once), or the first bad entry. */
function checkAddresses(given: readonly string[], field: 'address' | 'addresses'): Checked<string[]> {
  const addresses: string[] = [];
  for (let i = 0; i < given.length; i++) {
    const result = normaliseAddressEntry(given[i]!);
    if (!result.ok) return { ok: false, issue: { path: field === 'addresses' ? [field, i] : [field], message: result.message } };
    if (!addresses.includes(result.value)) addresses.push(result.value);
  }
  return { ok: true, value: addresses };
}

/** The countries upper-cased, each once (in the order first given), or the first that is not an assigned code. */
function checkCountries(given: readonly string[]): Checked<string[]> {
  const countries: string[] = [];
  for (let i = 0; i < given.length; i++) {
    const code = normaliseCountry(given[i]!);
    if (!code) return { ok: false, issue: { path: ['countries', i], message: `"${given[i]}" is not an ISO 3166-1 alpha-2 code` } };
    // At most MAX_COUNTRIES (the schema's bound): a short scan, cheaper than a set for the usual one to three.
    if (!countries.includes(code)) countries.push(code);
  }
  return { ok: true, value: countries };
}

/** The rules between fields (address or addresses, a paused key's reason, rotation fields together). */
function combinationIssue(entry: Partial<KeyEntry>, complete: boolean): EntryIssue | undefined {
  if (entry.address !== undefined && entry.addresses !== undefined) return { path: ['addresses'], message: 'give address or addresses, not both' };
  if (complete && entry.address === undefined && entry.addresses === undefined) {
    return { path: ['addresses'], message: 'is required: the IPv4/IPv6 addresses or CIDR ranges the key may be used from (or address, one of them)' };
  }
  const reasons = entry.pause_reasons;
  if (entry.status === 'paused' && !reasons?.length && entry.pause_reason === undefined) {
    return { path: ['pause_reason'], message: 'is required when status is paused (leaked, operator, payment_dispute or unpaid_renewal; or pause_reasons, a list of them)' };
  }
  if (reasons?.length && entry.status !== undefined && entry.status !== 'paused') return { path: ['pause_reasons'], message: `a ${entry.status} key holds no pause reasons (only a paused key does)` };
  if (reasons && entry.pause_reason !== undefined && !reasons.includes(entry.pause_reason)) {
    return { path: ['pause_reason'], message: 'must be one of pause_reasons when both are given' };
  }
  if ((entry.previous_key_sha256 === undefined) !== (entry.previous_key_expires_at === undefined)) {
    return { path: ['previous_key_expires_at'], message: 'previous_key_sha256 and previous_key_expires_at go together' };
  }
  return undefined;
}

/**
 * Checks and normalises what the structure cannot: countries are assigned ISO codes (upper-cased,
 * each once), addresses are IP addresses or CIDR ranges (see normaliseAddressEntry), `address`
 * becomes `addresses` (a list of one), hashes are lower-case, a paused key has a reason, rotation
 * fields go together. A complete entry (not a partial update) must name its addresses. Returns the
 * normalised entry or the first issue.
 */
export function checkKeyEntry<T extends Partial<KeyEntry>>(entry: T, complete = false): Checked<T> {
  const out: T = entry.address !== undefined ? withoutAddress(entry) : { ...entry };
  const combination = combinationIssue(entry, complete);
  if (combination?.path[0] === 'addresses') return { ok: false, issue: combination };
  const given = entry.addresses ?? (entry.address !== undefined ? [entry.address] : undefined);
  if (given) {
    const addresses = checkAddresses(given, entry.addresses ? 'addresses' : 'address');
    if (!addresses.ok) return addresses;
    out.addresses = addresses.value;
  }
  if (entry.countries) {
    const countries = checkCountries(entry.countries);
    if (!countries.ok) return countries;
    out.countries = countries.value;
  }
  if (entry.key_sha256 !== undefined) out.key_sha256 = entry.key_sha256.toLowerCase();
  if (entry.pause_reasons !== undefined) out.pause_reasons = sortedReasons(entry.pause_reasons);
  if (entry.previous_key_sha256 !== undefined) out.previous_key_sha256 = entry.previous_key_sha256.toLowerCase();
  if (combination) return { ok: false, issue: combination };
  return { ok: true, value: out };
}
