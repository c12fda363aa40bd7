/**
 * The portal's Redis stores (shared by every instance): sessions expire in Redis with the session,
 * only the SHA-256 of a session id is a Redis key, a pending OpenID sign-in is taken once, and the
 * failed sign-in budget is one count per address and minute across instances.
 */
import { createHash } from 'node:crypto';
import Redis from 'ioredis';
import { createRedisPendingLogins } from '../../gateway/portal/pending-logins';
import { createRedisPortalSessions, SESSION_ABSOLUTE_MS, SESSION_IDLE_MS } from '../../gateway/portal/portal-sessions';
import { createRedisSignInBudget } from '../../gateway/portal/sign-in-budget';
import { startRedis, type RedisServer } from '../kit/redis-server';

let server: RedisServer;
let a: Redis;
let b: Redis;

beforeAll(async () => {
  server = await startRedis();
  a = new Redis(server.url);
  b = new Redis(server.url);
});
afterAll(async () => {
  a?.disconnect();
  b?.disconnect();
  await server?.stop();
});

test('a session made through one client is read through another; its record expires with it; the id itself is never a key', async () => {
  let now = Date.now();
  const one = createRedisPortalSessions(a, () => now);
  const two = createRedisPortalSessions(b, () => now);
  const s = await one.create('acme', 'ops@acme.test');
  expect(await two.get(s.id)).toMatchObject({ accountId: 'acme', email: 'ops@acme.test', csrf: s.csrf });
  const keys = await a.keys('lgw:portal:session:*');
  expect(keys).toEqual([`lgw:portal:session:${createHash('sha256').update(s.id).digest('hex')}`]);
  expect(JSON.stringify(await a.get(keys[0]!))).not.toContain(s.id);
  const ttl = await a.pttl(keys[0]!);
  expect(ttl).toBeGreaterThan(SESSION_IDLE_MS - 60_000);
  expect(ttl).toBeLessThanOrEqual(SESSION_IDLE_MS);
  // Idle for longer than 30 minutes (the clock, not Redis): ended, and its record deleted.
  now += SESSION_IDLE_MS + 1;
  expect(await two.get(s.id)).toBeUndefined();
  expect(await a.exists(keys[0]!)).toBe(0);
});

test('the absolute limit bounds the record\'s lifetime even while in use', async () => {
  let now = Date.now();
  const store = createRedisPortalSessions(a, () => now);
  const s = await store.create('acme', null);
  now += SESSION_ABSOLUTE_MS - 60_000;
  // Still in use (a request every few minutes would have kept it): make it look recently seen.
  const key = `lgw:portal:session:${createHash('sha256').update(s.id).digest('hex')}`;
  await a.set(key, JSON.stringify({ accountId: 'acme', email: null, csrf: s.csrf, createdAt: s.createdAt, lastSeenAt: now - 20_000 }), 'PX', 120_000);
  expect(await store.get(s.id)).toBeDefined();
  expect(await a.pttl(key)).toBeLessThanOrEqual(60_000);
  now += 60_000;
  expect(await store.get(s.id)).toBeUndefined();
  await store.end(s.id);
});

test('a pending sign-in is taken once across clients', async () => {
  const login = { state: 's', codeVerifier: 'v', nonce: 'n' };
  await createRedisPendingLogins(a).put('p1', login);
  expect(await createRedisPendingLogins(b).take('p1')).toEqual(login);
  expect(await createRedisPendingLogins(a).take('p1')).toBeUndefined();
});

test('the failed sign-in budget is shared and counted as attempts start: 40 at once through two clients, 10 taken', async () => {
  const minute = Math.floor(Date.now() / 60_000);
  const now = minute * 60_000 + 1_000;
  const one = createRedisSignInBudget(a, 10, () => now);
  const two = createRedisSignInBudget(b, 10, () => now);
  const taken = await Promise.all(Array.from({ length: 40 }, (_, i) => (i % 2 ? one : two).take('192.0.2.1')));
  expect(taken.filter(Boolean)).toHaveLength(10);
  expect(await two.take('192.0.2.2')).toBe(true);
  // A sign-in that succeeded gives its attempt back: one more may try.
  await one.giveBack('192.0.2.1');
  expect(await two.take('192.0.2.1')).toBe(true);
  expect(await one.take('192.0.2.1')).toBe(false);
  expect(await a.pttl(`lgw:portal:failed:${minute}:192.0.2.1`)).toBeGreaterThan(0);
  // The next minute is a fresh budget; giving back where nothing was taken makes no key.
  const next = createRedisSignInBudget(a, 10, () => now + 60_000);
  await next.giveBack('192.0.2.9');
  expect(await a.exists(`lgw:portal:failed:${minute + 1}:192.0.2.9`)).toBe(0);
  expect(await next.take('192.0.2.1')).toBe(true);
});
