import type { GatewayConfig } from '../config/gateway-config';
import type { KeyEntry } from './key-entry';
import { sharedRecordParts, toKeyRecord, type FileKey } from './key-record-build';

/**
 * Checked entries in a compact form for the hand-over from the reader process (keys-file-loader.ts):
 * what a record takes from its entry apart from the id and the hashes (tier, countries, addresses,
 * status, limits, expiry) is written once per distinct value (`parts`), and each entry is three
 * values in one flat list (`rows`: id, key_sha256, index into `parts`). The form is JSON: one
 * string to parse, no object per entry to build and throw away, and the records built from it
 * share their parts (including the address matcher). `note` and the store's times are not in it
 * (no record holds them).
 */
export interface PackedKeyEntries {
  readonly parts: ReadonlyArray<Omit<KeyEntry, 'id' | 'key_sha256' | 'previous_key_sha256' | 'previous_key_expires_at' | 'note' | 'account' | 'created_at' | 'updated_at'>>;
  readonly rows: ReadonlyArray<string | number>;
  /** Rotations, three values each: the entry's index, previous_key_sha256, previous_key_expires_at. */
  readonly previous: ReadonlyArray<string | number>;
}

/** Fields that are not part of a packed entry's shared part. */
const OWN_FIELDS = new Set(['id', 'key_sha256', 'previous_key_sha256', 'previous_key_expires_at', 'note', 'account', 'created_at', 'updated_at']);

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
