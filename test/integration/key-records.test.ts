/**
 * Key records (docs/keys-and-accounts.md) through real gateways: `addresses` (IPv4, IPv6, CIDR ranges,
 * IPv4-mapped clients, `any`, the first release's `address`), `expires_at` (a key used across it),
 * `note` (in operator views only: never in an answer to a caller or in a log line), and deleting a
 * revoked record (which frees its id), in the keys file and in the Redis store.
 */
import Redis from 'ioredis';
import { fixtureListings } from '../fixtures/listings';
import {
  getWithKey, makeTempDir, randomKeyValue, removeTempDirs, runToExit, startBackend, startGateway, startStack, writeGatewayConfig, writeKeysFile,
  writeListingsFile, type Proc, type Stack,
} from '../kit/gateway-stack';
import { adminCall, readyAdminUrl } from '../kit/admin-api';
import { startRedis, type RedisServer } from '../kit/redis-server';
import { createKeyPointers } from '../../gateway/keys/key-pointers';
import { redisKeys, type StoredKey } from '../../gateway/keys/redis-layout';
import { createKeyAdmin } from '../../gateway/keys/key-admin';
import { sha256Hex } from '../../gateway/keys/key-format';
import { loadGatewayConfig } from '../../gateway/config/gateway-config';
import type { RedisClient } from '../../gateway/redis/connect';

const NOTE = `customer-note-${randomKeyValue('note')}`;
const ranged = randomKeyValue('ranged');
const single = randomKeyValue('single');
const anywhere = randomKeyValue('any');
const expiring = randomKeyValue('expiring');
const expired = randomKeyValue('expired');
const EXPIRES_IN_MS = 4000;
const expiresAt = new Date(Date.now() + 20_000 + EXPIRES_IN_MS);

let stack: Stack;
let proxied: Proc;

beforeAll(async () => {
  stack = await startStack({
    keys: [
      { id: 'ranged', value: ranged, tier: 'standard', countries: ['GB'], addresses: ['10.0.0.0/8', '192.0.2.7', '2001:db8::/32', '127.0.0.1'], status: 'active', note: NOTE },
      { id: 'single-range', value: single, tier: 'standard', countries: ['GB'], address: '127.0.0.0/8', status: 'active' },
      { id: 'anywhere', value: anywhere, tier: 'standard', countries: ['GB'], addresses: ['any'], status: 'active' },
      // Expiry is set at start-up time + 20 s + 4 s, so the start of a loaded machine does not eat it.
      { id: 'expiring', value: expiring, tier: 'standard', countries: ['GB'], address: '127.0.0.1', status: 'active', expires_at: expiresAt.toISOString() },
      { id: 'expired', value: expired, tier: 'standard', countries: ['GB'], address: '127.0.0.1', status: 'active', expires_at: '2020-01-01T00:00:00+01:00' },
    ],
    gateways: [{ TRUST_PROXY: '127.0.0.1/32' }],
  });
  proxied = stack.gateways[0]!;
}, 60_000);

afterAll(async () => {
  await stack?.stop();
  removeTempDirs();
});

const from = (ip: string, key: string) => getWithKey(proxied.url, '/v1/ping', key, { headers: { 'x-forwarded-for': ip } });

describe('addresses', () => {
  it.each([
    ['10.200.1.1', 200], ['10.0.0.0', 200], ['11.0.0.1', 403], ['9.255.255.255', 403],
    ['192.0.2.7', 200], ['192.0.2.8', 403],
    ['2001:db8:ffff::1', 200], ['2001:DB8::1', 200], ['2001:db9::1', 403],
    ['::ffff:10.1.2.3', 200], ['::ffff:11.1.2.3', 403],
  ])('a key registered for 10.0.0.0/8, 192.0.2.7, 2001:db8::/32: a request from %s gets %i', async (ip, status) => {
    const a = await from(ip, ranged);
    expect(a.status).toBe(status);
    if (status === 403) expect(a.body).toMatchObject({ error: 'ip_not_allowed', ip: ip.startsWith('::ffff:') ? ip.slice(7) : ip.toLowerCase() });
  });

  it('address (the first release\'s field) takes a range as a list of one; any allows every address', async () => {
    expect((await from('127.9.9.9', single)).status).toBe(200);
    expect((await from('128.0.0.1', single)).status).toBe(403);
    for (const ip of ['203.0.113.50', '2a00:1450::1', '10.0.0.1']) expect((await from(ip, anywhere)).status).toBe(200);
  });
});

describe('expires_at', () => {
  it('a key works until its expires_at and is 401 unauthenticated from then on; a key past it is 401 at once', async () => {
    expect((await getWithKey(proxied.url, '/v1/ping', expired)).body).toMatchObject({ error: 'unauthenticated' });
    expect((await getWithKey(proxied.url, '/v1/ping', expiring)).status).toBe(200);
    // Poll across the instant: 200 before, 401 after, never anything else.
    const seen: number[] = [];
    const deadline = expiresAt.getTime() + 15_000;
    for (;;) {
      const before = Date.now();
      const a = await getWithKey(proxied.url, '/v1/ping', expiring);
      seen.push(a.status);
      if (a.status === 200) expect(before).toBeLessThan(expiresAt.getTime());
      if (a.status === 401) {
        expect(a.body).toMatchObject({ error: 'unauthenticated' });
        expect(Date.now()).toBeGreaterThanOrEqual(expiresAt.getTime());
        break;
      }
      expect(Date.now()).toBeLessThan(deadline);
      await new Promise((r) => setTimeout(r, 250));
    }
    expect(new Set(seen)).toEqual(new Set([200, 401]));
  }, 60_000);
});

describe('note', () => {
  it('is never in an answer to a caller or in a log line', async () => {
    for (const ip of ['10.1.1.1', '11.1.1.1']) {
      const a = await from(ip, ranged);
      expect(a.text).not.toContain(NOTE);
      expect(JSON.stringify(a.headers)).not.toContain(NOTE);
    }
    const list = await getWithKey(proxied.url, '/v1/properties?country=GB&limit=2', ranged, { headers: { 'x-forwarded-for': '10.1.1.1' } });
    expect(list.status).toBe(200);
    expect(list.text).not.toContain(NOTE);
    expect(proxied.output.join('\n')).not.toContain(NOTE);
    expect(proxied.output.join('\n')).toContain('"key_id":"ranged"'); // the log did see the key's requests
  });
});

describe('keys file validation', () => {
  const refused = async (entry: Record<string, unknown>): Promise<string> => {
    const dir = makeTempDir();
    const keysFile = writeKeysFile([{ id: 'bad', value: randomKeyValue('bad'), tier: 'standard', countries: ['GB'], status: 'active', ...entry }], dir);
    const run = await runToExit('gateway/main.js', { LOG_LEVEL: 'info', PORT: '0', HOST: '127.0.0.1', BACKEND_URL: stack.backendUrl, KEYS_FILE: keysFile, GATEWAY_CONFIG: writeGatewayConfig(undefined, dir) });
    expect(run.code).toBe(1);
    const lines = `${run.stdout}${run.stderr}`.split('\n').filter((l) => l.trim());
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(keysFile);
    return lines[0]!;
  };

  it('refuses 17 addresses, a /0 range, a bad range, a bad expires_at and a long note with one line naming the entry and field', async () => {
    expect(await refused({ addresses: Array.from({ length: 17 }, (_, i) => `10.0.${i}.0/24`) })).toMatch(/keys\[0\] \(id bad\): field "addresses": must list at most 16 addresses or ranges/);
    expect(await refused({ addresses: ['10.0.0.1', '0.0.0.0/0'] })).toMatch(/field "addresses\[1\]": "0\.0\.0\.0\/0" allows every address; if that is meant, write "any"/);
    expect(await refused({ address: '10.0.0.0/33' })).toMatch(/field "address": "10\.0\.0\.0\/33": the prefix length is at most 32/);
    expect(await refused({ address: '127.0.0.1', expires_at: 'next tuesday' })).toMatch(/field "expires_at": must be an RFC 3339 date-time/);
    expect(await refused({ address: '127.0.0.1', note: 'x'.repeat(501) })).toMatch(/field "note": must be at most 500 characters/);
    expect(await refused({})).toMatch(/field "addresses": is required/);
  }, 60_000);
});

describe('the Redis key store', () => {
  const ADMIN_TOKEN = 'admin-token-for-key-record-tests-01';
  let redisServer: RedisServer;
  let redis: Redis;
  let backend: Proc;
  let gateway: Proc;
  let adminUrl: string;
  const admin = (method: string, url: string, body?: unknown) => adminCall(adminUrl, ADMIN_TOKEN, method, url, body);

  beforeAll(async () => {
    redisServer = await startRedis();
    redis = new Redis(redisServer.url);
    backend = await startBackend(writeListingsFile(fixtureListings()));
    const dir = makeTempDir();
    gateway = await startGateway({
      backendUrl: backend.url,
      keysFile: writeKeysFile([], dir),
      gatewayConfig: writeGatewayConfig(undefined, dir),
      env: { REDIS_URL: redisServer.url, KEY_STORE: 'redis', ADMIN_TOKEN, ADMIN_PORT: '0', TRUST_PROXY: '127.0.0.1/32' },
    });
    adminUrl = await readyAdminUrl(gateway, ADMIN_TOKEN);
  }, 60_000);

  afterAll(async () => {
    await gateway?.stop();
    await backend?.stop();
    redis?.disconnect();
    await redisServer?.stop();
  });

  it('stores addresses, expires_at and note; shows them to operators only; changes them; refuses 17 addresses', async () => {
    const created = await admin('POST', '/admin/keys', {
      id: 'redis-ranged', tier: 'standard', countries: ['GB'], addresses: ['10.0.0.7/8', '::ffff:192.0.2.0/120'], expires_at: '2099-01-01T00:00:00Z', note: NOTE,
    });
    expect(created.status).toBe(201);
    const shown = await admin('GET', '/admin/keys/redis-ranged');
    expect(shown.body).toMatchObject({ addresses: ['10.0.0.0/8', '192.0.2.0/24'], expires_at: '2099-01-01T00:00:00Z', note: NOTE });
    expect(shown.body).not.toHaveProperty('address');
    const key = created.body.key as string;
    const at = (ip: string) => getWithKey(gateway.url, '/v1/ping', key, { headers: { 'x-forwarded-for': ip } });
    expect((await at('10.9.9.9')).status).toBe(200);
    expect((await at('192.0.2.99')).status).toBe(200);
    const refusedAt = await at('198.51.100.1');
    expect(refusedAt.body).toMatchObject({ error: 'ip_not_allowed', ip: '198.51.100.1' });
    expect(refusedAt.text).not.toContain(NOTE);

    const seventeen = await admin('PATCH', '/admin/keys/redis-ranged', { addresses: Array.from({ length: 17 }, (_, i) => `10.${i}.0.0/16`) });
    expect(seventeen.status).toBe(400);
    expect(seventeen.body).toMatchObject({ error: 'invalid_parameter', parameter: 'addresses' });
    const slashZero = await admin('PATCH', '/admin/keys/redis-ranged', { addresses: ['::/0'] });
    expect(slashZero.body).toMatchObject({ error: 'invalid_parameter', parameter: 'addresses', message: expect.stringContaining('write "any"') });
    const both = await admin('PATCH', '/admin/keys/redis-ranged', { address: '10.0.0.1', addresses: ['10.0.0.2'] });
    expect(both.body).toMatchObject({ error: 'invalid_parameter', parameter: 'addresses' });

    const moved = await admin('PATCH', '/admin/keys/redis-ranged', { address: '198.51.100.1', note: null, expires_at: null });
    expect(moved.status).toBe(200);
    expect(moved.body).toMatchObject({ addresses: ['198.51.100.1'], address: '198.51.100.1' });
    expect(moved.body).not.toHaveProperty('note');
    expect(moved.body).not.toHaveProperty('expires_at');
    // Seen by the gateway at once (change message): the new address works, the old range does not.
    let status = 0;
    for (let i = 0; i < 40 && status !== 200; i++) {
      status = (await at('198.51.100.1')).status;
      if (status !== 200) await new Promise((r) => setTimeout(r, 100));
    }
    expect(status).toBe(200);
    expect((await at('10.9.9.9')).status).toBe(403);
    expect(gateway.output.join('\n')).not.toContain(NOTE);
  });

  it('a key expires in Redis too: 401 once expires_at has passed', async () => {
    const created = await admin('POST', '/admin/keys', { id: 'redis-expiring', tier: 'standard', countries: ['GB'], address: '127.0.0.1' });
    expect((await getWithKey(gateway.url, '/v1/ping', created.body.key)).status).toBe(200);
    const past = new Date(Date.now() - 1000).toISOString();
    expect((await admin('PATCH', '/admin/keys/redis-expiring', { expires_at: past })).status).toBe(200);
    let answer = await getWithKey(gateway.url, '/v1/ping', created.body.key);
    for (let i = 0; i < 40 && answer.status !== 401; i++) {
      await new Promise((r) => setTimeout(r, 100));
      answer = await getWithKey(gateway.url, '/v1/ping', created.body.key);
    }
    expect(answer.body).toMatchObject({ error: 'unauthenticated' });
  });

  it('a write tidies only the hash pointers that still lead to its own record: one another writer took over meanwhile stays', async () => {
    const pointers = createKeyPointers(redis);
    const hash = (c: string): string => c.repeat(64);
    const first = { id: 'tidy', tier: 'standard', countries: ['GB'], addresses: ['127.0.0.1'], status: 'active', key_sha256: hash('a'), created_at: 'c', updated_at: 'u' } as StoredKey;
    // The writer's order (gateway/keys/key-writer.ts): claim, write the record, tidy.
    await pointers.claim(first);
    await redis.set(redisKeys.record('tidy'), JSON.stringify(first));
    expect(await redis.get(redisKeys.byHash(hash('a')))).toBe('tidy');
    // Between the write that stops naming hash a and the tidying after it, another key claims a's pointer.
    const rolled = { ...first, key_sha256: hash('b') };
    await pointers.claim(rolled);
    await redis.set(redisKeys.record('tidy'), JSON.stringify(rolled));
    await redis.set(redisKeys.byHash(hash('a')), 'claimer');
    await pointers.tidy(first, rolled);
    expect(await redis.get(redisKeys.byHash(hash('a')))).toBe('claimer');
    expect(await redis.get(redisKeys.byHash(hash('b')))).toBe('tidy');
    // The same when the record is deleted.
    await redis.del(redisKeys.record('tidy'));
    await redis.set(redisKeys.byHash(hash('b')), 'claimer');
    await pointers.tidyRemoved(rolled);
    expect(await redis.get(redisKeys.byHash(hash('b')))).toBe('claimer');
  });

  it('create answers the new value once the record is committed, even when Redis fails right after (never an error for a key that exists)', async () => {
    // Every GET fails once the record's compare-and-set has run: the key exists, so its value must come back.
    let committed = false;
    const flaky = new Proxy(redis, {
      get(target, prop) {
        if (prop === 'eval') return async (...args: unknown[]) => { const r = await (target.eval as (...a: unknown[]) => Promise<unknown>)(...args); committed = true; return r; };
        if (prop === 'get') return async (key: string) => { if (committed) throw new Error('Command timed out'); return target.get(key); };
        const value = Reflect.get(target, prop, target) as unknown;
        return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      },
    });
    const keyAdmin = createKeyAdmin(flaky as unknown as RedisClient, loadGatewayConfig(writeGatewayConfig(undefined, makeTempDir())));
    const created = await keyAdmin.create({ id: 'committed-then-away', tier: 'standard', countries: ['GB'], address: '127.0.0.1' });
    expect(created.id).toBe('committed-then-away');
    expect(await redis.get(redisKeys.byHash(sha256Hex(created.key)))).toBe('committed-then-away');
  });

  it('deletes only a revoked key; deleting frees the id and its counters', async () => {
    const first = await admin('POST', '/admin/keys', { id: 'reusable', tier: 'standard', countries: ['GB'], address: '127.0.0.1', limits: { per_day: 5 } });
    expect((await getWithKey(gateway.url, '/v1/ping', first.body.key)).status).toBe(200);
    const active = await admin('DELETE', '/admin/keys/reusable');
    expect(active.status).toBe(400);
    expect(active.body).toMatchObject({ error: 'invalid_parameter', parameter: 'id', message: expect.stringContaining('revoke it first') });
    expect((await admin('DELETE', '/admin/keys/no-such-key')).status).toBe(404);
    expect((await admin('POST', '/admin/keys/reusable/revoke')).status).toBe(200);
    const deleted = await admin('DELETE', '/admin/keys/reusable');
    expect(deleted.status).toBe(204);
    expect(deleted.text).toBe('');
    expect((await admin('GET', '/admin/keys/reusable')).status).toBe(404);
    expect(await redis.sismember('lgw:keys', 'reusable')).toBe(0);
    expect(await redis.exists(`lgw:keyhash:${(await import('../kit/gateway-stack')).sha256Hex(first.body.key)}`)).toBe(0);
    // The id is free again, and the new key starts from zero.
    const second = await admin('POST', '/admin/keys', { id: 'reusable', tier: 'standard', countries: ['GB'], address: '127.0.0.1' });
    expect(second.status).toBe(201);
    const usage = await admin('GET', '/admin/keys/reusable/usage');
    expect(usage.body.windows.map((w: { used: number }) => w.used)).toEqual([0, 0, 0]);
    expect((await getWithKey(gateway.url, '/v1/ping', first.body.key)).status).toBe(401);
    expect((await getWithKey(gateway.url, '/v1/ping', second.body.key)).status).toBe(200);
  });
});
