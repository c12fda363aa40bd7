/**
 * The YAML keys file (KEY_STORE=file): reading and checking one, whole. Its parts live beside it,
 * one idea each: the entry's schema (key-entry.ts), its normalisation (key-entry-check.ts), a fast
 * well-formedness check for large files (key-entry-fast-check.ts), record building
 * (key-record-build.ts) and the reader process's packed form (key-entry-pack.ts). The names other
 * folders and the scripts import from here are re-exported.
 */
import { z } from 'zod';
import type { GatewayConfig } from '../config/gateway-config';
import { readYamlFile } from '../config/yaml-file';
import { ConfigError, formatIssuePath } from '../config/config-error';
import { KeyEntrySchema, type KeyEntry } from './key-entry';
import { checkKeyEntry } from './key-entry-check';
import { isWellFormedKeysFile } from './key-entry-fast-check';
import { toFileKeys, type FileKey } from './key-record-build';

export { KeyEntryFields, KeyEntrySchema, MAX_NOTE, addressesOf, type KeyEntry } from './key-entry';
export { checkKeyEntry, type EntryIssue } from './key-entry-check';
export { isWellFormedKeyEntry } from './key-entry-fast-check';
export { sharedRecordParts, toFileKeys, toKeyRecord, type FileKey, type SharedRecordParts } from './key-record-build';
export { fromPackedKeyEntries, packKeyEntries, type PackedKeyEntries } from './key-entry-pack';

/** `accounts:` (holder accounts) is checked by gateway/accounts/keys-file-accounts.ts. */
const KeysFileSchema = z.object({ keys: z.array(KeyEntrySchema), accounts: z.array(z.unknown()).optional() }).strict();

function describeEntry(raw: unknown, path: ReadonlyArray<string | number>): string {
  const [top, index, ...field] = path;
  if (top !== 'keys' || typeof index !== 'number') return formatIssuePath(path);
  const id = (raw as { keys?: Array<{ id?: unknown }> }).keys?.[index]?.id;
  const entry = `keys[${index}]${typeof id === 'string' ? ` (id ${id})` : ''}`;
  return field.length ? `${entry}: field "${formatIssuePath(field)}"` : entry;
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

/** The keys file as the records the gateway uses, read in this thread (see keys-file-loader.ts for large files). */
export const loadKeysFile = (file: string, config: GatewayConfig): FileKey[] => toFileKeys(readKeysFile(file), config);
