import type { KeyLookup, KeyStore } from './key-record';
import type { FileKey } from './keys-file';

export interface FileKeyStore extends KeyStore {
  /** Swaps in a new set of keys (hot reload): one assignment, so a request sees old or new, never a mix. */
  replace(keys: readonly FileKey[]): void;
  readonly size: number;
}

interface Entry {
  readonly lookup: KeyLookup;
  /** For a previous (rotated) hash: when it stops authenticating, ms. */
  readonly expiresAt?: number;
}

const NOT_FOUND: KeyLookup = { kind: 'not_found' };

function index(keys: readonly FileKey[]): Map<string, Entry> {
  const byHash = new Map<string, Entry>();
  for (const { record, previous } of keys) {
    const lookup: KeyLookup = { kind: 'found', record };
    byHash.set(record.keySha256, { lookup });
    if (previous) byHash.set(previous.keySha256, { lookup: { kind: 'found', record, previous: true }, expiresAt: previous.expiresAt });
  }
  return byHash;
}

/** The embedded key store: records from the YAML keys file, in a map by SHA-256. */
export function createFileKeyStore(keys: readonly FileKey[]): FileKeyStore {
  let byHash = index(keys);
  return {
    lookup(keySha256) {
      const entry = byHash.get(keySha256);
      if (!entry) return NOT_FOUND;
      if (entry.expiresAt !== undefined && entry.expiresAt <= Date.now()) {
        // A previous value whose grace is over: refused like an unknown one, but the log says whose.
        return { kind: 'not_found', keyId: (entry.lookup as { record: { id: string } }).record.id, reason: 'expired_grace' };
      }
      return entry.lookup;
    },
    replace(next) {
      byHash = index(next);
    },
    get size() {
      return byHash.size;
    },
  };
}
