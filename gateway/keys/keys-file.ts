import { z } from 'zod';
import { isLimitValue, LimitsSchema, toLimits, type GatewayConfig, type Limits } from '../config/gateway-config';
import { readYamlFile } from '../config/yaml-file';
import { formatIssuePath } from '../config/config-error';
import { ConfigError } from '../config/config-error';
import { normaliseCountry } from '../validation/iso-countries';
import { normaliseAddress } from './address';
import type { KeyRecord } from './key-record';

const SHA256_HEX = /^[0-9a-fA-F]{64}$/;
const KEY_ID = /^[A-Za-z0-9._-]{1,64}$/;

/**
 * The fields of a key record, exactly as CONTRACT part 3 names them (the Redis store adds its own).
 * This schema checks the structure only; `checkKeyEntry` then checks and normalises what needs
 * code (countries, address, field combinations). Two plain steps rather than zod effects: effects
 * cost ~7 µs per entry each, seconds on a 100,000-key file.
 */
export const KeyEntryFields = z.object({
  id: z.string().regex(KEY_ID, 'must be 1 to 64 characters of A-Z a-z 0-9 . _ -'),
  key_sha256: z.string().regex(SHA256_HEX, 'must be the SHA-256 of the key value as 64 hex characters'),
  tier: z.enum(['standard', 'advanced']),
  countries: z.array(z.string()).min(1, 'must list at least one country'),
  address: z.string(),
  status: z.enum(['active', 'paused', 'revoked']),
  pause_reason: z.enum(['unpaid_renewal', 'payment_dispute']).optional(),
  limits: LimitsSchema.partial().strict().optional(),
});

/**
 * Rotation in the keys file: the previous value's hash keeps working until the given time, so a
 * holder can move to a new value without downtime.
 */
const RotationFields = z.object({
  previous_key_sha256: z.string().regex(SHA256_HEX, 'must be the SHA-256 of the previous key value as 64 hex characters').optional(),
  previous_key_expires_at: z.string().datetime({ offset: true, message: 'must be an ISO 8601 date-time, e.g. 2026-12-01T00:00:00Z' }).optional(),
});

/** One record of the YAML keys file (structure). */
export const KeyEntrySchema = KeyEntryFields.merge(RotationFields).strict();
export type KeyEntry = z.infer<typeof KeyEntrySchema>;

/** A field that failed `checkKeyEntry`: its path inside the entry and why. */
export interface EntryIssue {
  readonly path: ReadonlyArray<string | number>;
  readonly message: string;
}

/**
 * Checks and normalises what the structure cannot: countries are assigned ISO codes (upper-cased),
 * the address is an IP address (IPv4-mapped IPv6 written as IPv4), hashes are lower-case, a paused key
 * has a reason, rotation fields go together. Returns the normalised entry or the first issue.
 */
export function checkKeyEntry<T extends Partial<KeyEntry>>(entry: T): { ok: true; value: T } | { ok: false; issue: EntryIssue } {
  const out: T = { ...entry };
  if (entry.countries) {
    const countries: string[] = [];
    for (let i = 0; i < entry.countries.length; i++) {
      const code = normaliseCountry(entry.countries[i]!);
      if (!code) return { ok: false, issue: { path: ['countries', i], message: `"${entry.countries[i]}" is not an ISO 3166-1 alpha-2 code` } };
      countries.push(code);
    }
    out.countries = countries;
  }
  if (entry.address !== undefined) {
    const address = normaliseAddress(entry.address);
    if (!address) return { ok: false, issue: { path: ['address'], message: `"${entry.address}" is not an IPv4 or IPv6 address` } };
    out.address = address;
  }
  if (entry.key_sha256 !== undefined) out.key_sha256 = entry.key_sha256.toLowerCase();
  if (entry.previous_key_sha256 !== undefined) out.previous_key_sha256 = entry.previous_key_sha256.toLowerCase();
  if (entry.status === 'paused' && entry.pause_reason === undefined) {
    return { ok: false, issue: { path: ['pause_reason'], message: 'is required when status is paused (unpaid_renewal or payment_dispute)' } };
  }
  if ((entry.previous_key_sha256 === undefined) !== (entry.previous_key_expires_at === undefined)) {
    return { ok: false, issue: { path: ['previous_key_expires_at'], message: 'previous_key_sha256 and previous_key_expires_at go together' } };
  }
  return { ok: true, value: out };
}

const KeysFileSchema = z.object({ keys: z.array(KeyEntrySchema) }).strict();

const ENTRY_FIELDS = new Set(Object.keys(KeyEntrySchema.shape));
const LIMIT_FIELDS = new Set(['per_minute', 'per_day', 'per_month']);
const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * True only for an entry `KeyEntrySchema` accepts as it is; false when unsure (the schema then
 * decides, and words the error). zod costs ~4.5 µs per entry plus the garbage of its copy: about
 * half the start-up time of a 100,000-key file. A test holds this check to the schema (property).
 */
export function isWellFormedKeyEntry(e: unknown): e is KeyEntry {
  if (!isRecord(e)) return false;
  for (const field in e) if (!ENTRY_FIELDS.has(field)) return false;
  if (typeof e.id !== 'string' || !KEY_ID.test(e.id)) return false;
  if (typeof e.key_sha256 !== 'string' || !SHA256_HEX.test(e.key_sha256)) return false;
  if (e.tier !== 'standard' && e.tier !== 'advanced') return false;
  if (!Array.isArray(e.countries) || e.countries.length === 0) return false;
  for (const country of e.countries) if (typeof country !== 'string') return false;
  if (typeof e.address !== 'string') return false;
  if (e.status !== 'active' && e.status !== 'paused' && e.status !== 'revoked') return false;
  if ('pause_reason' in e && e.pause_reason !== 'unpaid_renewal' && e.pause_reason !== 'payment_dispute') return false;
  if ('limits' in e) {
    if (!isRecord(e.limits)) return false;
    for (const field in e.limits) if (!LIMIT_FIELDS.has(field) || !isLimitValue(e.limits[field])) return false;
  }
  if ('previous_key_sha256' in e && (typeof e.previous_key_sha256 !== 'string' || !SHA256_HEX.test(e.previous_key_sha256))) return false;
  if ('previous_key_expires_at' in e) return false; // rare; the schema's date-time rule decides
  return true;
}

/** The keys file's shape, checked fast (see isWellFormedKeyEntry). */
function isWellFormedKeysFile(raw: unknown): boolean {
  if (!isRecord(raw) || !Array.isArray(raw.keys)) return false;
  for (const field in raw) if (field !== 'keys') return false;
  for (const entry of raw.keys) if (!isWellFormedKeyEntry(entry)) return false;
  return true;
}

function describeEntry(raw: unknown, path: ReadonlyArray<string | number>): string {
  const [top, index, ...field] = path;
  if (top !== 'keys' || typeof index !== 'number') return formatIssuePath(path);
  const id = (raw as { keys?: Array<{ id?: unknown }> }).keys?.[index]?.id;
  const entry = `keys[${index}]${typeof id === 'string' ? ` (id ${id})` : ''}`;
  return field.length ? `${entry}: field "${formatIssuePath(field)}"` : entry;
}

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
}
export const sharedRecordParts = (): SharedRecordParts => ({ countries: new Map(), limits: new Map(), strings: new Map() });

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
  return Object.freeze({
    id: entry.id,
    keySha256: entry.key_sha256,
    tier: shared ? sharedString(shared, entry.tier) : entry.tier,
    countries,
    address: shared ? sharedString(shared, entry.address) : entry.address,
    status: shared ? sharedString(shared, entry.status) : entry.status,
    ...(entry.pause_reason ? { pauseReason: entry.pause_reason } : {}),
    limits,
  });
}

/** Reads and validates the entries of a keys file; duplicate ids or hashes are refused. Throws a one-line `ConfigError`. */
export function readKeysFile(file: string): KeyEntry[] {
  const raw = readYamlFile(file, KeysFileSchema, describeEntry, isWellFormedKeysFile);
  const ids = new Set<string>();
  const hashes = new Set<string>();
  return raw.keys.map((unchecked, index) => {
    const checked = checkKeyEntry(unchecked);
    if (!checked.ok) throw new ConfigError(`${file}: ${describeEntry(raw, ['keys', index, ...checked.issue.path])}: ${checked.issue.message}`);
    const entry = checked.value;
    if (ids.has(entry.id)) throw new ConfigError(`${file}: keys[${index}] (id ${entry.id}): field "id": duplicate id`);
    if (hashes.has(entry.key_sha256)) {
      throw new ConfigError(`${file}: keys[${index}] (id ${entry.id}): field "key_sha256": the same hash is already used by another key`);
    }
    if (entry.previous_key_sha256 !== undefined && hashes.has(entry.previous_key_sha256)) {
      throw new ConfigError(`${file}: keys[${index}] (id ${entry.id}): field "previous_key_sha256": the same hash is already used by another key`);
    }
    ids.add(entry.id);
    hashes.add(entry.key_sha256);
    if (entry.previous_key_sha256 !== undefined) hashes.add(entry.previous_key_sha256);
    return entry;
  });
}

/** A record and, during a rotation, the previous hash that still authenticates until `expiresAt` (ms). */
export interface FileKey {
  readonly record: KeyRecord;
  readonly previous?: { readonly keySha256: string; readonly expiresAt: number };
}

/** The keys file as the records the gateway uses, read in this thread (see keys-file-loader.ts for large files). */
export const loadKeysFile = (file: string, config: GatewayConfig): FileKey[] => toFileKeys(readKeysFile(file), config);

/** Checked entries as the records the gateway uses. */
export const toFileKeys = (entries: readonly KeyEntry[], config: GatewayConfig, shared = sharedRecordParts()): FileKey[] =>
  entries.map((entry) => ({
    record: toKeyRecord(entry, config, shared),
    ...(entry.previous_key_sha256 && entry.previous_key_expires_at
      ? { previous: { keySha256: entry.previous_key_sha256, expiresAt: Date.parse(entry.previous_key_expires_at) } }
      : {}),
  }));
