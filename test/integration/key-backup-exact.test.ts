/**
 * Exact backups (issue 25 item 2) and a safe export (issue 23 finding 11): `keys export FILE` then
 * `keys import FILE` into an empty Redis gives back every record field by field (creation and
 * update times, rotation, pause reason, expiry, note, addresses, limits), as `keys list` and the
 * admin API's record read them; the export is written through a fresh exclusive temp file (mode
 * 0600), never through a `FILE.partial` someone left there.
 */
import fs from 'node:fs';
import path from 'node:path';
import Redis from 'ioredis';
import { loadGatewayConfig } from '../../gateway/config/gateway-config';
import { createKeyAdmin, type KeyAdmin } from '../../gateway/keys/key-admin';
import { redisKeys } from '../../gateway/keys/redis-layout';
import { makeTempDir, removeTempDirs, writeGatewayConfig } from '../kit/gateway-stack';
import { runKeysCli } from '../kit/keys-cli';
import { startRedis, type RedisServer } from '../kit/redis-server';

jest.setTimeout(60_000);

let source: RedisServer;
let target: RedisServer;
let sourceRedis: Redis;
let targetRedis: Redis;
let gatewayConfig: string;
let admin: KeyAdmin;
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

beforeAll(async () => {
  [source, target] = await Promise.all([startRedis(), startRedis()]);
  sourceRedis = new Redis(source.url);
  targetRedis = new Redis(target.url);
  gatewayConfig = writeGatewayConfig();
  admin = createKeyAdmin(sourceRedis, loadGatewayConfig(gatewayConfig));
  // Records of every shape, each changed after it was created (so created_at and updated_at differ).
  await admin.create({ id: 'plain', tier: 'standard', countries: ['GB'], address: '10.0.0.1' });
  await admin.create({ id: 'noted', tier: 'advanced', countries: ['GB', 'FR'], addresses: ['10.0.0.0/8', '2001:db8::/32'], note: 'billing #42', expires_at: '2030-01-31T00:00:00Z', per_day: 500 });
  await admin.create({ id: 'paused', tier: 'standard', countries: ['DE'], addresses: ['any'] });
  await admin.create({ id: 'rolling', tier: 'standard', countries: ['GB'], address: '10.0.0.2' });
  await admin.create({ id: 'rolled-over', tier: 'standard', countries: ['GB'], address: '10.0.0.3' });
  await admin.create({ id: 'revoked', tier: 'standard', countries: ['GB'], address: '10.0.0.4' });
  await pause(20);
  await admin.pause('paused', 'payment_dispute');
  await admin.roll('rolling', 86_400);
  await admin.roll('rolled-over', 1); // its grace passes before the export: kept as stored
  await admin.revoke('revoked');
  await admin.set('noted', { limits: { per_minute: 7 } });
  await pause(1100);
}, 60_000);

afterAll(async () => {
  sourceRedis?.disconnect();
  targetRedis?.disconnect();
  await Promise.all([source?.stop(), target?.stop()]);
  removeTempDirs();
});

/** Every stored record, as stored (less the store's own bookkeeping of audit entries). */
async function storedRecords(redis: Redis): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = {};
  for (const id of (await redis.smembers(redisKeys.ids)).sort()) {
    const { op: _op, audit_outbox: _outbox, ...record } = JSON.parse((await redis.get(redisKeys.record(id)))!) as Record<string, unknown>;
    out[id] = record;
  }
  return out;
}

it('export then import into an empty Redis gives back every record field by field', async () => {
  const file = path.join(makeTempDir(), 'backup.yaml');
  const exported = await runKeysCli(source.url, ['export', file], { GATEWAY_CONFIG: gatewayConfig });
  expect(exported.stderr).toBe('');
  expect(exported.code).toBe(0);
  const imported = await runKeysCli(target.url, ['import', file], { GATEWAY_CONFIG: gatewayConfig });
  expect(imported.stderr).toBe('');
  expect(imported.code).toBe(0);

  const before = await storedRecords(sourceRedis);
  expect(Object.keys(before)).toHaveLength(6);
  expect(await storedRecords(targetRedis)).toEqual(before);

  const list = async (url: string) => (await runKeysCli(url, ['list'], { GATEWAY_CONFIG: gatewayConfig })).stdout;
  const listed = await list(source.url);
  expect(JSON.parse(listed)).toHaveLength(6);
  expect(await list(target.url)).toBe(listed);
  const restored = createKeyAdmin(targetRedis, loadGatewayConfig(gatewayConfig));
  for (const id of Object.keys(before)) expect(await restored.show(id)).toEqual(await admin.show(id));
  // The times are the originals, not the import's.
  const noted = await restored.show('noted');
  expect(noted.created_at < noted.updated_at).toBe(true);
  expect(Date.parse(noted.updated_at)).toBeLessThan(Date.now() - 1000);
});

it('writes through a fresh exclusive temp file: a FILE.partial symlink is not followed, the export is mode 0600', async () => {
  const dir = makeTempDir();
  const file = path.join(dir, 'backup.yaml');
  const victim = path.join(dir, 'victim.txt');
  fs.writeFileSync(victim, 'not yours\n');
  fs.symlinkSync(victim, `${file}.partial`);
  fs.writeFileSync(file, 'old backup\n');
  fs.chmodSync(file, 0o666);
  const exported = await runKeysCli(source.url, ['export', file], { GATEWAY_CONFIG: gatewayConfig });
  expect(exported.code).toBe(0);
  expect(fs.readFileSync(victim, 'utf8')).toBe('not yours\n');
  expect(fs.lstatSync(`${file}.partial`).isSymbolicLink()).toBe(true);
  expect(fs.statSync(file).mode & 0o777).toBe(0o600);
  expect(fs.readFileSync(file, 'utf8')).toContain('id: plain');
  // Nothing else left beside it.
  expect(fs.readdirSync(dir).sort()).toEqual(['backup.yaml', 'backup.yaml.partial', 'victim.txt']);
});
