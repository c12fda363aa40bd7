/**
 * The keys file read in a child process gives exactly what the in-thread reader gives: the same
 * records (handed over in the packed form), the same one-line error for a bad file. The reader
 * runs compiled, so this suite loads the loader from dist/ (npm test builds first); the
 * TypeScript loader falls back to the in-thread reader, which the other suites cover. Files of any
 * size go to the reader process here (the gateway sends only files of 1 MiB and more).
 */
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { stringify } from 'yaml';
import { loadGatewayConfig } from '../../gateway/config/gateway-config';
import { fromPackedKeyEntries, loadKeysFile, packKeyEntries, readKeysFile, toFileKeys } from '../../gateway/keys/keys-file';

const DIST = path.resolve(__dirname, '../../dist/gateway/keys/keys-file-loader.js');
// eslint-disable-next-line @typescript-eslint/no-require-imports
const loader = (): typeof import('../../gateway/keys/keys-file-loader') => require(DIST);
const config = loadGatewayConfig(path.resolve(__dirname, '../../config/gateway.yaml'));
const dir = mkdtempSync(path.join(tmpdir(), 'keys-loader-'));
const sha = (v: string): string => createHash('sha256').update(v).digest('hex');

function keysFile(name: string, keys: unknown[]): string {
  const file = path.join(dir, name);
  writeFileSync(file, stringify({ keys }));
  return file;
}

/** Records as plain data (sets as sorted arrays), to compare the two readers. */
const plain = (keys: ReturnType<typeof loadKeysFile>): unknown =>
  // The address matcher is a closure (equal lists make equal matchers): compared through its list.
  keys.map(({ record, previous }) => ({ ...record, addresses: record.addressList, countries: [...record.countries].sort(), previous }));

test('the compiled loader is there (npm test builds before jest)', () => {
  expect(existsSync(DIST)).toBe(true);
});

/** Entries that differ from one another in every field a record takes, one field at a time. */
function variedKeys(count: number): unknown[] {
  return Array.from({ length: count }, (_, i) => ({
    id: `k${i}`,
    key_sha256: sha(`v${i}`),
    tier: i % 2 ? 'advanced' : 'standard',
    countries: i % 3 ? ['gb', 'FR'] : i % 13 ? ['DE'] : ['DE', 'GB'],
    ...(i % 17 === 3
      ? { addresses: ['10.0.0.7/24', '2001:db8::/48', '198.51.100.20'] }
      : { address: i % 5 ? '127.0.0.1' : i % 19 ? '::ffff:10.0.0.1' : 'any' }),
    status: i % 7 ? (i % 23 ? 'active' : 'revoked') : 'paused',
    ...(i % 7 ? {} : { pause_reason: i % 2 ? 'unpaid_renewal' : 'payment_dispute' }),
    ...(i % 11 ? {} : { limits: i % 22 ? { per_minute: 5 } : { per_day: 7, per_month: 70 } }),
    ...(i % 29 ? {} : { expires_at: i % 58 ? '2031-01-01T00:00:00Z' : '2032-06-01T12:00:00+02:00' }),
    ...(i % 31 ? {} : { note: `customer ${i}` }),
    ...(i % 37 === 5 ? { previous_key_sha256: sha(`old${i}`), previous_key_expires_at: '2030-01-01T00:00:00Z' } : {}),
  }));
}

test('packed entries give the same records as the entries, however they differ (the hand-over form)', () => {
  const file = keysFile('varied.yaml', variedKeys(500));
  const entries = readKeysFile(file);
  const packed = packKeyEntries(entries);
  expect(packed.parts.length).toBeGreaterThan(20); // the variations above make many parts...
  expect(packed.parts.length).toBeLessThan(200); // ...but far fewer than entries
  const unpacked = fromPackedKeyEntries(JSON.parse(JSON.stringify(packed)), config);
  expect(plain(unpacked)).toEqual(plain(toFileKeys(entries, config)));
  expect(unpacked.filter((k) => k.previous)).toHaveLength(14);
  // The matcher itself, not only its list: each record answers for its own addresses.
  const i = 3; // addresses: ['10.0.0.7/24', '2001:db8::/48', '198.51.100.20']
  expect(unpacked[i]!.record.addresses.matches('10.0.0.200')).toBe(true);
  expect(unpacked[i]!.record.addresses.matches('2001:db8:0:1::9')).toBe(true);
  expect(unpacked[i]!.record.addresses.matches('127.0.0.1')).toBe(false);
  expect(unpacked[1]!.record.addresses.matches('127.0.0.1')).toBe(true);
  expect(unpacked[1]!.record.addresses.matches('10.0.0.1')).toBe(false);
});

test('6,001 keys: the same records as the in-thread reader, parts shared, handed over in lines of 500', async () => {
  const file = keysFile('many.yaml', variedKeys(6_001));
  const stats: { readerPeakKb?: number; chunks?: number } = {};
  const offThread = await loader().readKeysFileOffThread(file, config, 0, stats);
  expect(plain(offThread)).toEqual(plain(loadKeysFile(file, config)));
  expect(offThread).toHaveLength(6_001);
  expect(stats.chunks).toBe(13); // each line built between two turns of the event loop
  expect(stats.readerPeakKb).toBeGreaterThan(10_000); // it was read by another process, which said its peak
  expect(offThread[1]!.record.countries).toBe(offThread[2]!.record.countries); // one set for ['GB', 'FR']
  expect(offThread[1]!.record.limits).toBe(offThread[13]!.record.limits); // the advanced tier's defaults
  expect(offThread[1]!.record.addresses).toBe(offThread[13]!.record.addresses); // one matcher for the same part
  expect(Object.isFrozen(offThread[0]!.record)).toBe(true);
});

test.each([
  ['a duplicate id', [{ id: 'a', key_sha256: sha('1'), tier: 'standard', countries: ['GB'], address: '127.0.0.1', status: 'active' }, { id: 'a', key_sha256: sha('2'), tier: 'standard', countries: ['GB'], address: '127.0.0.1', status: 'active' }]],
  ['an unknown country', [{ id: 'a', key_sha256: sha('1'), tier: 'standard', countries: ['XX'], address: '127.0.0.1', status: 'active' }]],
  ['an unknown field', [{ id: 'a', key_sha256: sha('1'), tier: 'standard', countries: ['GB'], address: '127.0.0.1', status: 'active', colour: 'red' }]],
])('%s: the same one-line error as the in-thread reader', async (_label, keys) => {
  const file = keysFile('bad.yaml', keys);
  let expected: Error | undefined;
  try {
    loadKeysFile(file, config);
  } catch (err) {
    expected = err as Error;
  }
  expect(expected?.name).toBe('ConfigError');
  await expect(loader().readKeysFileOffThread(file, config, 0)).rejects.toThrow(expected!.message);
  await expect(loader().readKeysFileOffThread(file, config, 0)).rejects.toHaveProperty('name', 'ConfigError');
});

test('a missing file: the same error', async () => {
  const file = path.join(dir, 'missing.yaml');
  expect(() => loadKeysFile(file, config)).toThrow();
  let message = '';
  try {
    loadKeysFile(file, config);
  } catch (err) {
    message = (err as Error).message;
  }
  await expect(loader().readKeysFileOffThread(file, config, 0)).rejects.toThrow(message);
});
