/**
 * The pending gate of the Redis request store (gateway/requests/pending-gate.ts): a key's cap and
 * same-request check are one step in Redis, and nothing a crash leaves behind blocks a key for
 * good: a place whose request was decided (the decider died before freeing it), a place whose
 * request was never written (the writer died), and requests recorded before the gate existed.
 */
import path from 'node:path';
import pino from 'pino';
import { loadGatewayConfig } from '../../gateway/config/gateway-config';
import { parseRedisTopology } from '../../gateway/config/redis-env';
import { createKeyAdmin, type KeyAdmin } from '../../gateway/keys/key-admin';
import { applyThroughKeyAdmin } from '../../gateway/requests/apply-change';
import { connectRedis, whenReady, type RedisClient } from '../../gateway/redis/connect';
import { createRedisHolderStores } from '../../gateway/requests/holder-stores';
import { pendingGateKey } from '../../gateway/requests/pending-gate';
import { MAX_PENDING_REQUESTS, newRequestId, sameRequestKey, type RequestChange } from '../../gateway/requests/subscription-request';
import { ISO_COUNTRY_CODES } from '../../gateway/validation/iso-countries';
import { makeTempDir, removeTempDirs } from '../kit/gateway-stack';
import { writePortalConfig } from '../kit/portal';
import { startRedis, type RedisServer } from '../kit/redis-server';

let redisServer: RedisServer;
let redis: RedisClient;
let requests: ReturnType<typeof createRedisHolderStores>['requests'];
let holders: ReturnType<typeof createRedisHolderStores>;
let admin: KeyAdmin;

const COUNTRIES = [...ISO_COUNTRY_CODES].sort();
const ask = (keyId: string, change: RequestChange) => requests.create({ keyId, accountId: 'acme', change });
const pending = async (keyId: string): Promise<number> => (await requests.list({ keyId, status: 'pending', limit: 1000 })).requests.length;
/** Fills the key with MAX_PENDING_REQUESTS pending requests, one country each. */
const fill = async (keyId: string) => {
  const made = [];
  for (const c of COUNTRIES.slice(0, MAX_PENDING_REQUESTS)) made.push(await ask(keyId, { countries: [c] }));
  return made;
};

beforeAll(async () => {
  redisServer = await startRedis();
  const configFile = path.join(makeTempDir(), 'gateway.yaml');
  writePortalConfig(configFile);
  redis = connectRedis(parseRedisTopology({ REDIS_URL: redisServer.url, REDIS_COMMAND_TIMEOUT_MS: 5000 })!, pino({ level: 'silent' }), 'test', { autoPipelining: false });
  if (!(await whenReady(redis, 10_000))) throw new Error('test Redis client not ready');
  admin = createKeyAdmin(redis, loadGatewayConfig(configFile));
  holders = createRedisHolderStores(redis, admin);
  requests = holders.requests;
}, 30_000);

afterAll(async () => {
  redis?.disconnect();
  await redisServer?.stop();
  removeTempDirs();
});

test('a full key is refused (conflict); a decision frees its place (a failed approval does not), and the same change may then be asked again', async () => {
  const made = await fill('full');
  await expect(ask('full', { tier: 'advanced' })).rejects.toMatchObject({ code: 'conflict', message: expect.stringContaining('50 requests waiting') });
  await requests.decide(made[0]!.id, 'declined', 'op');
  // An approval that cannot apply (no such key) leaves the request pending, and its place taken.
  await expect(requests.decide(made[1]!.id, 'approved', 'op')).rejects.toMatchObject({ code: 'not_found' });
  expect((await ask('full', { countries: [COUNTRIES[0]!] })).id).not.toBe(made[0]!.id);
  await expect(ask('full', { tier: 'advanced' })).rejects.toMatchObject({ code: 'conflict' });
  expect(await pending('full')).toBe(MAX_PENDING_REQUESTS);
});

test('a place left by a decider that died before freeing it is freed by the next request that finds it', async () => {
  const first = await ask('decided', { tier: 'advanced' });
  await requests.decide(first.id, 'declined', 'op');
  // As if the decider had died after the decision, before freeing the place.
  await redis.hset(pendingGateKey('decided'), sameRequestKey('acme', { tier: 'advanced' }), first.id);
  const again = await ask('decided', { tier: 'advanced' });
  expect(again.id).not.toBe(first.id);
  expect(again.status).toBe('pending');
});

test('a place taken by a writer that died before writing its request: the same request meanwhile answers as pending, and the place is freed after 30 s', async () => {
  const change = { countries: ['FR'] };
  const young = newRequestId();
  await redis.hset(pendingGateKey('died'), '~seeded', '1', sameRequestKey('acme', change), young);
  // Young: being written by another instance this instant, so the same request, not recorded twice.
  expect((await ask('died', change)).id).toBe(young);
  // Old: its writer died; the place is freed and the request recorded.
  const old = newRequestId(Date.now() - 60_000);
  await redis.hset(pendingGateKey('died'), sameRequestKey('acme', change), old);
  const recorded = await ask('died', change);
  expect(recorded.id).not.toBe(old);
  expect(await requests.get(recorded.id)).toMatchObject({ status: 'pending' });
  // Such places also stop counting against the cap.
  for (let i = 0; i < MAX_PENDING_REQUESTS - 1; i++) await redis.hset(pendingGateKey('died-full'), `gone-${i}`, newRequestId(Date.now() - 60_000));
  await redis.hset(pendingGateKey('died-full'), '~seeded', '1');
  await fill('died-full');
  expect(await pending('died-full')).toBe(MAX_PENDING_REQUESTS);
});

test('requests recorded before the gate existed count against the cap and as the same request', async () => {
  const made = await fill('older');
  await redis.del(pendingGateKey('older')); // as a store written before this version
  await expect(ask('older', { tier: 'advanced' })).rejects.toMatchObject({ code: 'conflict' });
  expect((await ask('older', { countries: [COUNTRIES[3]!] })).id).toBe(made[3]!.id);
  expect(await pending('older')).toBe(MAX_PENDING_REQUESTS);
});

test('an approval whose key is moved or changed between its read and its write changes nothing', async () => {
  await holders.accounts.create({ id: 'acme', name: 'Acme', emails: ['ops@acme.test'] });
  await holders.accounts.create({ id: 'other', name: 'Other', emails: ['it@other.test'] });
  const between = async (id: string, meanwhile: Record<string, unknown>) => {
    await admin.create({ id, tier: 'standard', countries: ['GB'], address: '10.0.0.1', account: 'acme' });
    // The approval reads the key, then (before its write) an operator changes it.
    const apply = applyThroughKeyAdmin({ set: admin.set, show: async (keyId) => {
      const seen = await admin.show(keyId);
      await admin.set(keyId, meanwhile);
      return seen;
    } });
    return apply(id, { countries: ['FR'] }, 'acme');
  };
  await expect(between('moved-between', { account: 'other' })).rejects.toMatchObject({ code: 'not_found' });
  expect(await admin.show('moved-between')).toMatchObject({ account: 'other', countries: ['GB'] });
  await expect(between('changed-between', { countries: ['GB', 'DE'] })).rejects.toMatchObject({ code: 'conflict' });
  expect(await admin.show('changed-between')).toMatchObject({ account: 'acme', countries: ['GB', 'DE'] });
});
