import type { KeyLookup, KeyRecord, KeyStore } from './key-record';

/** The embedded key store: records from the YAML keys file, held in a map by SHA-256. */
export function createFileKeyStore(records: readonly KeyRecord[]): KeyStore {
  const byHash = new Map<string, KeyLookup>(records.map((record) => [record.keySha256, { kind: 'found', record }]));
  const notFound: KeyLookup = { kind: 'not_found' };
  return { lookup: (keySha256) => byHash.get(keySha256) ?? notFound };
}
