/**
 * The keys file read in a worker thread gives exactly what the in-thread reader gives: the same
 * records (in batches across the worker's turns), the same one-line error for a bad file. The
 * worker runs compiled, so this suite loads the loader from dist/ (npm test builds first); the
 * TypeScript loader falls back to the in-thread reader, which the other suites cover. Files of any
 * size go to the worker here (the gateway sends only files of 1 MiB and more).
 */
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { stringify } from 'yaml';
import { loadGatewayConfig } from '../../gateway/config/gateway-config';
import { loadKeysFile } from '../../gateway/keys/keys-file';

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
  keys.map(({ record, previous }) => ({ ...record, countries: [...record.countries].sort(), previous }));

test('the compiled loader is there (npm test builds before jest)', () => {
  expect(existsSync(DIST)).toBe(true);
});

test('6,001 keys across two batches: the same records as the in-thread reader, parts shared', () => {
  const keys = Array.from({ length: 6_001 }, (_, i) => ({
    id: `k${i}`,
    key_sha256: sha(`v${i}`),
    tier: i % 2 ? 'advanced' : 'standard',
    countries: i % 3 ? ['gb', 'FR'] : ['DE'],
    address: i % 5 ? '127.0.0.1' : '::ffff:10.0.0.1',
    status: i % 7 ? 'active' : 'paused',
    ...(i % 7 ? {} : { pause_reason: 'unpaid_renewal' }),
    ...(i % 11 ? {} : { limits: { per_minute: 5 } }),
    ...(i === 42 ? { previous_key_sha256: sha('old'), previous_key_expires_at: '2030-01-01T00:00:00Z' } : {}),
  }));
  const file = keysFile('many.yaml', keys);
  const offThread = loader().loadKeysFileOffThread(file, config, 0);
  expect(plain(offThread)).toEqual(plain(loadKeysFile(file, config)));
  expect(offThread).toHaveLength(6_001);
  expect(offThread[1]!.record.countries).toBe(offThread[2]!.record.countries); // one set for ['GB', 'FR']
  expect(offThread[1]!.record.limits).toBe(offThread[3]!.record.limits); // the advanced tier's defaults
  expect(Object.isFrozen(offThread[0]!.record)).toBe(true);
});

test.each([
  ['a duplicate id', [{ id: 'a', key_sha256: sha('1'), tier: 'standard', countries: ['GB'], address: '127.0.0.1', status: 'active' }, { id: 'a', key_sha256: sha('2'), tier: 'standard', countries: ['GB'], address: '127.0.0.1', status: 'active' }]],
  ['an unknown country', [{ id: 'a', key_sha256: sha('1'), tier: 'standard', countries: ['XX'], address: '127.0.0.1', status: 'active' }]],
  ['an unknown field', [{ id: 'a', key_sha256: sha('1'), tier: 'standard', countries: ['GB'], address: '127.0.0.1', status: 'active', colour: 'red' }]],
])('%s: the same one-line error as the in-thread reader', (_label, keys) => {
  const file = keysFile('bad.yaml', keys);
  let expected: Error | undefined;
  try {
    loadKeysFile(file, config);
  } catch (err) {
    expected = err as Error;
  }
  expect(expected?.name).toBe('ConfigError');
  expect(() => loader().loadKeysFileOffThread(file, config, 0)).toThrow(expected!.message);
  try {
    loader().loadKeysFileOffThread(file, config, 0);
  } catch (err) {
    expect((err as Error).name).toBe('ConfigError');
  }
});

test('a missing file: the same error', () => {
  const file = path.join(dir, 'missing.yaml');
  expect(() => loadKeysFile(file, config)).toThrow();
  let message = '';
  try {
    loadKeysFile(file, config);
  } catch (err) {
    message = (err as Error).message;
  }
  expect(() => loader().loadKeysFileOffThread(file, config, 0)).toThrow(message);
});
