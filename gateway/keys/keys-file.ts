import { z } from 'zod';
import { isLimitValue, LimitsSchema, toLimits, type GatewayConfig, type Limits } from '../config/gateway-config';
import { readYamlFile } from '../config/yaml-file';
import { formatIssuePath } from '../config/config-error';
import { ConfigError } from '../config/config-error';
import { normaliseCountry } from '../validation/iso-countries';
import { MAX_ADDRESSES, normaliseAddressEntry, addressMatcher } from './address-list';
import type { KeyRecord } from './key-record';

const SHA256_HEX = /^[0-9a-fA-F]{64}$/;
/** The longest `note` a record may carry. */
export const MAX_NOTE = 500;
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
  /** The first release's one address; read as a list of one (an entry has this or `addresses`). */
  address: z.string().optional(),
  addresses: z
    .array(z.string())
    .min(1, 'must list at least one address or range')
    .max(MAX_ADDRESSES, `must list at most ${MAX_ADDRESSES} addresses or ranges`)
    .optional(),
  status: z.enum(['active', 'paused', 'revoked']),
  pause_reason: z.enum(['unpaid_renewal', 'payment_dispute']).optional(),
  limits: LimitsSchema.partial().strict().optional(),
  /** From this instant on the key is refused with 401 (RFC 3339 with an offset or Z). */
  expires_at: z.string().datetime({ offset: true, message: 'must be an RFC 3339 date-time with a time zone, e.g. 2027-01-31T00:00:00Z' }).optional(),
  /** For operators only: never in an answer to a caller, never logged. */
  note: z.string().max(MAX_NOTE, `must be at most ${MAX_NOTE} characters`).optional(),
  /** The holder account the key belongs to (gateway/accounts/); absent: an operator's key no holder sees. */
  account: z.string().regex(KEY_ID, 'must be an account id: 1 to 64 characters of A-Z a-z 0-9 . _ -').optional(),
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
 * A copy of an entry without its `address` (which checkKeyEntry turns into `addresses`). Copied
 * field by field rather than spread and `delete`d: a deleted property turns an object into a slow
 * hash table, 100,000 of them on a large keys file.
 */
function withoutAddress<T extends Partial<KeyEntry>>(entry: T): T {
  const out: Record<string, unknown> = {};
  for (const field in entry) if (field !== 'address') out[field] = entry[field];
  return out as T;
}

/**
 * Checks and normalises what the structure cannot: countries are assigned ISO codes (upper-cased),
 * addresses are IP addresses or CIDR ranges (see normaliseAddressEntry), `address` becomes
 * `addresses` (a list of one), hashes are lower-case, a paused key has a reason, rotation fields go
 * together. A complete entry (not a partial update) must name its addresses. Returns the
 * normalised entry or the first issue.
 */
export function checkKeyEntry<T extends Partial<KeyEntry>>(entry: T, complete = false): { ok: true; value: T } | { ok: false; issue: EntryIssue } {
  const out: T = entry.address !== undefined ? withoutAddress(entry) : { ...entry };
  if (entry.address !== undefined && entry.addresses !== undefined) {
    return { ok: false, issue: { path: ['addresses'], message: 'give address or addresses, not both' } };
  }
  if (complete && entry.address === undefined && entry.addresses === undefined) {
    return { ok: false, issue: { path: ['addresses'], message: 'is required: the IPv4/IPv6 addresses or CIDR ranges the key may be used from (or address, one of them)' } };
  }
  const given = entry.addresses ?? (entry.address !== undefined ? [entry.address] : undefined);
  if (given) {
    const field = entry.addresses ? 'addresses' : 'address';
    const addresses: string[] = [];
    for (let i = 0; i < given.length; i++) {
      const result = normaliseAddressEntry(given[i]!);
      if (!result.ok) return { ok: false, issue: { path: field === 'addresses' ? [field, i] : [field], message: result.message } };
      if (!addresses.includes(result.value)) addresses.push(result.value);
    }
    out.addresses = addresses;
  }
  if (entry.countries) {
    const countries: string[] = [];
    for (let i = 0; i < entry.countries.length; i++) {
      const code = normaliseCountry(entry.countries[i]!);
      if (!code) return { ok: false, issue: { path: ['countries', i], message: `"${entry.countries[i]}" is not an ISO 3166-1 alpha-2 code` } };
      countries.push(code);
    }
    out.countries = countries;
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

/** `accounts:` (holder accounts) is checked by gateway/accounts/keys-file-accounts.ts. */
const KeysFileSchema = z.object({ keys: z.array(KeyEntrySchema), accounts: z.array(z.unknown()).optional() }).strict();

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
  if ('address' in e && typeof e.address !== 'string') return false;
  if ('addresses' in e) {
    if (!Array.isArray(e.addresses) || e.addresses.length === 0 || e.addresses.length > MAX_ADDRESSES) return false;
    for (const address of e.addresses) if (typeof address !== 'string') return false;
  }
  if ('note' in e && (typeof e.note !== 'string' || e.note.length > MAX_NOTE)) return false;
  if ('account' in e && (typeof e.account !== 'string' || !KEY_ID.test(e.account))) return false;
  if ('expires_at' in e) return false; // the schema's date-time rule decides
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
  for (const field in raw) if (field !== 'keys' && !(field === 'accounts' && Array.isArray(raw.accounts))) return false;
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

/** A record's address list, whichever way it was written (records stored before `addresses` have `address`). */
export const addressesOf = (entry: Pick<KeyEntry, 'address' | 'addresses'>): string[] => entry.addresses ?? (entry.address !== undefined ? [entry.address] : []);
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
    addresses: addressMatcher(addressesOf(entry)),
    addressList: addressesOf(entry),
    status: shared ? sharedString(shared, entry.status) : entry.status,
    ...(entry.expires_at !== undefined ? { expiresAt: Date.parse(entry.expires_at) } : {}),
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
    const checked = checkKeyEntry(unchecked, true);
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

/**
 * Checked entries in a compact form for the hand-over from the reader process (keys-file-loader.ts):
 * what a record takes from its entry apart from the id and the hashes (tier, countries, addresses,
 * status, limits, expiry) is written once per distinct value (`parts`), and each entry is three
 * values in one flat list (`rows`: id, key_sha256, index into `parts`). The form is JSON: one
 * string to parse, no object per entry to build and throw away, and the records built from it
 * share their parts (including the address matcher). `note` is not in it (no record holds it).
 */
export interface PackedKeyEntries {
  readonly parts: ReadonlyArray<Omit<KeyEntry, 'id' | 'key_sha256' | 'previous_key_sha256' | 'previous_key_expires_at' | 'note' | 'account'>>;
  readonly rows: ReadonlyArray<string | number>;
  /** Rotations, three values each: the entry's index, previous_key_sha256, previous_key_expires_at. */
  readonly previous: ReadonlyArray<string | number>;
}

/** Fields that are not part of a packed entry's shared part. */
const OWN_FIELDS = new Set(['id', 'key_sha256', 'previous_key_sha256', 'previous_key_expires_at', 'note', 'account']);

/**
 * A text that is equal for two entries exactly when all their fields but OWN_FIELDS are: every
 * field, whatever fields the schema has. Cheaper than JSON.stringify of a copy (~3 µs an entry).
 */
function partKey(entry: KeyEntry): string {
  let key = '';
  for (const field in entry) {
    if (OWN_FIELDS.has(field)) continue;
    const value = (entry as Record<string, unknown>)[field];
    key += `${field}\u0000${Array.isArray(value) ? value.join('\u0001') : typeof value === 'object' ? JSON.stringify(value) : String(value)}\u0000`;
  }
  return key;
}

export function packKeyEntries(entries: readonly KeyEntry[]): PackedKeyEntries {
  const parts: Array<PackedKeyEntries['parts'][number]> = [];
  const partIndex = new Map<string, number>();
  const rows: Array<string | number> = [];
  const previous: Array<string | number> = [];
  for (let i = 0; i < entries.length; i++) {
    const entry = entries[i]!;
    const key = partKey(entry);
    let index = partIndex.get(key);
    if (index === undefined) {
      index = parts.length;
      const part: Record<string, unknown> = {};
      for (const field in entry) if (!OWN_FIELDS.has(field)) part[field] = (entry as Record<string, unknown>)[field];
      parts.push(part as PackedKeyEntries['parts'][number]);
      partIndex.set(key, index);
    }
    rows.push(entry.id, entry.key_sha256, index);
    if (entry.previous_key_sha256 && entry.previous_key_expires_at) previous.push(i, entry.previous_key_sha256, entry.previous_key_expires_at);
  }
  return { parts, rows, previous };
}

/**
 * The records of packed entries: the same records `toFileKeys` makes of the entries (a test holds
 * the two to each other), each a copy of its part's record with its own id and hash.
 */
export function fromPackedKeyEntries(packed: PackedKeyEntries, config: GatewayConfig): FileKey[] {
  const shared = sharedRecordParts();
  const templates = packed.parts.map((part) => toKeyRecord({ ...part, id: '', key_sha256: '' }, config, shared));
  const { rows, previous } = packed;
  const keys = new Array<FileKey>(rows.length / 3);
  for (let i = 0, r = 0; r < rows.length; i++, r += 3) {
    keys[i] = { record: Object.freeze({ ...templates[rows[r + 2] as number]!, id: rows[r] as string, keySha256: rows[r + 1] as string }) };
  }
  for (let p = 0; p < previous.length; p += 3) {
    const index = previous[p] as number;
    keys[index] = { record: keys[index]!.record, previous: { keySha256: previous[p + 1] as string, expiresAt: Date.parse(previous[p + 2] as string) } };
  }
  return keys;
}

/** Checked entries as the records the gateway uses. */
export const toFileKeys = (entries: readonly KeyEntry[], config: GatewayConfig, shared = sharedRecordParts()): FileKey[] =>
  entries.map((entry) => ({
    record: toKeyRecord(entry, config, shared),
    ...(entry.previous_key_sha256 && entry.previous_key_expires_at
      ? { previous: { keySha256: entry.previous_key_sha256, expiresAt: Date.parse(entry.previous_key_expires_at) } }
      : {}),
  }));
