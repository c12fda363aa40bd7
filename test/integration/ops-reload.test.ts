/**
 * Hot reload of the keys file and the gateway config (on change and on SIGHUP) under load, an
 * invalid file refused while the old configuration keeps serving, and key rotation in the keys file.
 */
import fs from 'node:fs';
import { stringify } from 'yaml';
import { fixtureListings } from '../fixtures/listings';
import {
  budget, DEFAULT_TIERS, eventually, getWithKey, keysFileText, makeTempDir, randomKeyValue, removeTempDirs, sha256Hex, startBackend, startGateway, UNLIMITED,
  writeListingsFile, writeTempFile, type KeySpec, type Proc,
} from '../kit/gateway-stack';

// The load of the first test must not meet a per-minute limit (a faster gateway answers more
// requests while a reload is applied): steady has limits no test reaches; `added` keeps its tier's.
const steady: KeySpec = { id: 'steady', value: randomKeyValue('steady'), tier: 'standard', countries: ['GB'], address: '127.0.0.1', status: 'active', limits: UNLIMITED };
const added: KeySpec = { id: 'added', value: randomKeyValue('added'), tier: 'standard', countries: ['GB'], address: '127.0.0.1', status: 'active' };

let backend: Proc;
let gateway: Proc;
let keysFile: string;
let configFile: string;

/** Replaces a file the way editors and config management do: write a temp file, rename over. */
function replaceFile(file: string, text: string): void {
  fs.writeFileSync(`${file}.tmp`, text);
  fs.renameSync(`${file}.tmp`, file);
}

/** A reload is seen within 3 s on an idle machine (scaled by the load of this run). */
const RELOAD = { timeoutMs: 3000, intervalMs: 20 };

beforeAll(async () => {
  backend = await startBackend(writeListingsFile(fixtureListings()));
  const dir = makeTempDir();
  keysFile = writeTempFile('keys.yaml', keysFileText([steady]), dir);
  configFile = writeTempFile('gateway.yaml', stringify({ tiers: DEFAULT_TIERS }), dir);
  gateway = await startGateway({ backendUrl: backend.url, keysFile, gatewayConfig: configFile });
}, 30_000);

afterAll(async () => {
  await gateway?.stop();
  await backend?.stop();
  removeTempDirs();
});

it('applies an edited keys file under load without dropping a request', async () => {
  let running = true;
  const statuses: number[] = [];
  const load = Promise.all(
    Array.from({ length: 6 }, async () => {
      while (running) statuses.push((await getWithKey(gateway.url, '/v1/properties?country=GB&limit=2', steady.value)).status);
    }),
  );
  await new Promise((r) => setTimeout(r, 300));
  expect((await getWithKey(gateway.url, '/v1/ping', added.value)).status).toBe(401);
  replaceFile(keysFile, keysFileText([steady, added]));
  const replacedAt = Date.now();
  await eventually('the added key accepted', async () => (await getWithKey(gateway.url, '/v1/ping', added.value)).status === 200, RELOAD);
  const ms = Date.now() - replacedAt;
  await new Promise((r) => setTimeout(r, 300));
  running = false;
  await load;
  expect(statuses.length).toBeGreaterThan(20);
  expect(statuses.filter((s) => s !== 200)).toEqual([]);
  expect(ms).toBeLessThan(budget(3000));
  expect(gateway.output.some((l) => l.includes('configuration reloaded'))).toBe(true);
});

it('refuses an invalid keys file with one log line and keeps serving the previous keys', async () => {
  const before = gateway.output.length;
  replaceFile(keysFile, keysFileText([steady, added]).replace('address: 127.0.0.1', 'address: not-an-address'));
  const refused = (): string | undefined => gateway.output.slice(before).find((l) => l.includes('configuration refused'));
  await eventually('the refusal logged', () => refused() !== undefined, RELOAD);
  const line = refused()!;
  expect(line).toContain('keys.yaml');
  expect(line).toContain('field \\"address\\"');
  expect((await getWithKey(gateway.url, '/v1/ping', steady.value)).status).toBe(200);
  expect((await getWithKey(gateway.url, '/v1/ping', added.value)).status).toBe(200);
});

it('reloads the gateway config on SIGHUP: new tier limits show in RateLimit-Policy', async () => {
  replaceFile(keysFile, keysFileText([steady, added])); // valid again
  await eventually('the second reload logged', () => gateway.output.filter((l) => l.includes('configuration reloaded')).length >= 2, RELOAD);
  const tiers = { ...DEFAULT_TIERS, standard: { per_minute: 777, per_day: 7777, per_month: 77777 } };
  // Written in place (no rename) and announced with SIGHUP, as an operator without a watcher would.
  fs.writeFileSync(configFile, stringify({ tiers }));
  gateway.child.kill('SIGHUP');
  await eventually('the new tier limit in RateLimit-Policy', async () => ((await getWithKey(gateway.url, '/v1/ping', added.value)).headers['ratelimit-policy'] ?? '').toString().includes('q=777'), RELOAD);
  await eventually('the SIGHUP reload logged', () => gateway.output.some((l) => l.includes('"reason":"SIGHUP"') && l.includes('configuration reloaded')), RELOAD);
});

it('honours a rotated key: the previous value works until its expiry, the new one at once', async () => {
  const next = randomKeyValue('rolled');
  // Room for a slow reload on a loaded machine: the old value must still be valid when it is seen.
  const expiresAt = new Date(Date.now() + 15_000).toISOString();
  const text = keysFileText([steady, added]).replace(
    `key_sha256: ${sha256Hex(steady.value)}`,
    `key_sha256: ${sha256Hex(next)}\n    previous_key_sha256: ${sha256Hex(steady.value)}\n    previous_key_expires_at: "${expiresAt}"`,
  );
  replaceFile(keysFile, text);
  await eventually('the next key accepted', async () => (await getWithKey(gateway.url, '/v1/ping', next)).status === 200, { ...RELOAD, timeoutMs: 10_000 });
  const ping = await getWithKey(gateway.url, '/v1/ping', steady.value);
  expect(ping.status).toBe(200);
  expect(ping.body.key_id).toBe('steady');
  // Polled slowly: the key's per-minute limit must not be what ends the old value.
  await eventually('the steady key refused', async () => (await getWithKey(gateway.url, '/v1/ping', steady.value)).status === 401, { timeoutMs: 25_000, intervalMs: 250 });
  expect((await getWithKey(gateway.url, '/v1/ping', next)).status).toBe(200);
}, 60_000);
