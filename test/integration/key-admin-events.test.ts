/**
 * What the key admin tells and records about a change: no `key.changed` event for a change that
 * changes nothing (`PATCH {}`, re-importing a record as stored); a roll's event carries the grace
 * end exactly as stored; an import that swaps a key's value is in the audit log as
 * `key_value: rotated` (never the hash), as a keys-file reload records it (issues 25.6, 23.4).
 */
import Redis from 'ioredis';
import { loadGatewayConfig } from '../../gateway/config/gateway-config';
import { createKeyAdmin, type KeyAdmin } from '../../gateway/keys/key-admin';
import { redisKeys } from '../../gateway/keys/redis-layout';
import { removeTempDirs, sha256Hex, writeGatewayConfig, writeTempFile } from '../kit/gateway-stack';
import { startRedis, type RedisServer } from '../kit/redis-server';

let server: RedisServer;
let redis: Redis;
let admin: KeyAdmin;
const events: Array<{ type: string; data: Record<string, unknown> }> = [];

beforeAll(async () => {
  server = await startRedis();
  redis = new Redis(server.url);
  admin = createKeyAdmin(redis, loadGatewayConfig(writeGatewayConfig()), undefined, undefined, async (type, data) => void events.push({ type, data }));
});
afterAll(async () => {
  redis?.disconnect();
  await server?.stop();
  removeTempDirs();
});

const typesSince = (start: number): string[] => events.slice(start).map((e) => e.type);
const entryText = (id: string, key: string) =>
  `keys:\n  - {id: ${id}, key_sha256: ${sha256Hex(key)}, tier: standard, countries: [GB], addresses: [10.0.0.1], status: active}\n`;

it('sends no key.changed for PATCH {} or for values the key already has, and one for a real change', async () => {
  await admin.create({ id: 'patched', tier: 'standard', countries: ['GB'], address: '10.0.0.1' });
  const start = events.length;
  await admin.set('patched', {});
  await admin.set('patched', { countries: ['gb'], tier: 'standard' });
  expect(typesSince(start)).toEqual([]);
  await admin.set('patched', { countries: ['FR'] });
  expect(typesSince(start)).toEqual(['key.changed']);
});

it("a roll's event carries previous_key_valid_until exactly as stored", async () => {
  await admin.create({ id: 'rolled', tier: 'standard', countries: ['GB'], address: '10.0.0.1' });
  const start = events.length;
  await admin.roll('rolled', 3600);
  const event = events.slice(start).find((e) => e.type === 'key.rolled')!;
  const stored = JSON.parse((await redis.get(redisKeys.record('rolled')))!) as { previous_expires_at: number };
  expect(event.data.previous_key_valid_until).toBe(new Date(stored.previous_expires_at).toISOString());
  expect(event.data.previous_key_valid_until).toBe((await admin.show('rolled')).previous_key_valid_until);
});

it('re-importing an unchanged record sends no event and writes no entry; a swapped value is audited as rotated', async () => {
  const file = writeTempFile('import.yaml', entryText('imported', 'first-value'));
  await admin.import(file);
  const start = events.length;
  const auditBefore = await redis.xlen(redisKeys.audit);
  await admin.import(file);
  expect(typesSince(start)).toEqual([]);
  expect(await redis.xlen(redisKeys.audit)).toBe(auditBefore);

  await admin.import(writeTempFile('swapped.yaml', entryText('imported', 'second-value')));
  const page = await admin.readAudit({ keyId: 'imported', limit: 10 });
  expect(page.entries[0]!.action).toBe('import');
  expect(page.entries[0]!.changes).toEqual({ key_value: { before: 'previous value', after: 'rotated' } });
  expect(JSON.stringify(page.entries)).not.toContain(sha256Hex('second-value'));
  expect(typesSince(start)).toEqual(['key.changed']);
});
