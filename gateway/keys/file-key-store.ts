import { systemClock, type Clock } from '../clock';
import type { KeyLookup, KeyStore } from './key-record';
import type { FileKey } from './key-record-build';

export interface FileKeyStore extends KeyStore {
  /** Swaps in a new set of keys (hot reload): one assignment, so a request sees old or new, never a mix. */
  replace(keys: readonly FileKey[]): void;
  /** Swaps in an index built beforehand (a slice at a time, off the request's way): one assignment. */
  replaceIndex(index: FileKeyIndex): void;
}

/** A previous (rotated) hash: its lookup, and when it stops authenticating (ms). */
interface PreviousEntry {
  readonly lookup: KeyLookup & { readonly kind: 'found' };
  readonly expiresAt: number;
}

const NOT_FOUND: KeyLookup = { kind: 'not_found' };

/** A set of keys by hash, as the store looks them up. */
export type FileKeyIndex = Map<string, KeyLookup | PreviousEntry>;

/**
 * By hash: a current hash maps straight to its lookup (no wrapper per key: 100,000 keys are 100,000
 * objects fewer, ~3 MB), a previous one to a PreviousEntry. Adds to `byHash` (built in parts).
 */
export function indexFileKeys(keys: readonly FileKey[], byHash: FileKeyIndex = new Map()): FileKeyIndex {
  for (const { record, previous, ended } of keys) {
    byHash.set(record.keySha256, { kind: 'found', record });
    if (previous) byHash.set(previous.keySha256, { lookup: { kind: 'found', record, previous: true }, expiresAt: previous.expiresAt });
    for (const hash of ended ?? []) byHash.set(hash, { kind: 'not_found', keyId: record.id, reason: 'value_ended' });
  }
  return byHash;
}

/** The embedded key store: records from the YAML keys file, in a map by SHA-256. */
/** `clock` decides when a previous value's grace is over (default: the system clock). */
export function createFileKeyStore(keys: readonly FileKey[], clock: Clock = systemClock): FileKeyStore {
  let byHash = indexFileKeys(keys);
  return {
    lookup(keySha256) {
      const entry = byHash.get(keySha256);
      if (!entry) return NOT_FOUND;
      if ('kind' in entry) return entry;
      if (entry.expiresAt <= clock.now()) {
        // A previous value whose grace is over: refused like an unknown one, but the log says whose.
        return { kind: 'not_found', keyId: entry.lookup.record.id, reason: 'expired_grace' };
      }
      return entry.lookup;
    },
    known(keySha256) {
      const entry = byHash.get(keySha256);
      if (!entry) return undefined;
      if ('kind' in entry) return entry.kind === 'found' ? entry.record : undefined;
      return entry.expiresAt > clock.now() ? entry.lookup.record : undefined;
    },
    replace(next) {
      byHash = indexFileKeys(next);
    },
    replaceIndex(next) {
      byHash = next;
    },
  };
}
