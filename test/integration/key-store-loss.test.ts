/**
 * Losing the Redis key store is loud and survivable (docs/guarantees.md). Redis restarted empty under
 * load, two gateways: no 401 for a key that was valid (known keys keep working from each instance's
 * cache, an unknown one is 503), the loss logged as an error and exported as a metric, /readyz still
 * 200 naming the loss; `keys import` of a `keys export` restores service. A FLUSHALL (redis-cli) is
 * caught too. Also here, as they need the admin API: failed admin authentications are logged
 * without the token, and a Redis outage is one log line without a stack.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { eventually, getWithKey, makeTempDir, removeTempDirs, type Answer, type Proc } from '../kit/gateway-stack';
import { runKeysCli } from '../kit/keys-cli';
import { announcedUrl } from '../kit/log-lines';
import type { RedisServer } from '../kit/redis-server';
import { startRedisStack, type RedisStack } from '../kit/redis-stack';

const ADMIN_TOKEN = 'admin-token-for-loss-tests-0123456789';
let redisServer: RedisServer;
let stack: RedisStack;
let gateways: Proc[];
const values: Record<string, string> = {};
let exportFile: string;

async function createKey(id: string): Promise<string> {
  const result = await runKeysCli(redisServer.url, ['create', '--id', id, '--tier', 'standard', '--countries', 'GB', '--address', '127.0.0.1', '--per-minute', '100000', '--per-day', '1000000', '--per-month', '10000000']);
  expect(result.code).toBe(0);
  return result.stdout.trim().split('\n').pop()!;
}

const metric = async (g: Proc, name: string): Promise<number | undefined> => {
  const text = await (await fetch(`${await announcedUrl(g, 'ops listening')}/metrics`)).text();
  const m = new RegExp(`^${name} (\\d+)`, 'm').exec(text);
  return m ? Number(m[1]) : undefined;
};

/** How long the waits below may take on an idle machine (scaled by the load). */
const WAIT = { timeoutMs: 15_000, intervalMs: 100 };

const lostLines = (g: Proc): string[] => g.output.filter((l) => l.includes('"msg":"key store lost'));

beforeAll(async () => {
  stack = await startRedisStack({ env: { OPS_PORT: '0' }, gateways: [{ ADMIN_TOKEN, ADMIN_PORT: '0' }, {}] });
  redisServer = stack.redisServer;
  gateways = stack.gateways;
  for (const id of ['warm-a', 'warm-b', 'cold-c']) values[id] = await createKey(id);
  exportFile = path.join(makeTempDir(), 'keys-backup.yaml');
}, 60_000);

afterAll(async () => {
  await stack?.stop();
  removeTempDirs();
});

test('keys export writes every record, hashes only', async () => {
  const result = await runKeysCli(redisServer.url, ['export', exportFile]);
  expect(result).toMatchObject({ code: 0, stdout: `exported 3 keys to ${exportFile} (hashes only)\n` });
  const text = fs.readFileSync(exportFile, 'utf8');
  for (const id of Object.keys(values)) expect(text).toContain(`id: ${id}`);
  for (const value of Object.values(values)) expect(text).not.toContain(value);
  expect(text.match(/key_sha256: [0-9a-f]{64}/g)).toHaveLength(3);
});

test('failed admin authentications are logged, never with the token', async () => {
  const adminUrl = await announcedUrl(gateways[0]!, 'admin api listening');
  const wrong = 'not-the-admin-token-0123456789-secret';
  expect((await fetch(`${adminUrl}/admin/keys`, { headers: { authorization: `Bearer ${wrong}` } })).status).toBe(401);
  expect((await fetch(`${adminUrl}/admin/keys`)).status).toBe(401);
  await eventually('two failed-authentication lines', () => gateways[0]!.output.filter((l) => l.includes('admin authentication failed')).length >= 2, WAIT);
  const lines = gateways[0]!.output.filter((l) => l.includes('admin authentication failed')).map((l) => JSON.parse(l) as Record<string, unknown>);
  expect(lines.map((l) => l.reason)).toEqual(['wrong_token', 'no_token']);
  expect(lines[0]).toMatchObject({ level: 'warn', method: 'GET', ip: expect.any(String) });
  expect(gateways[0]!.output.join('\n')).not.toContain(wrong);
});

test('Redis restarted empty under load: no 401 for a valid key, the loss logged and measured; import restores', async () => {
  // An operator signed in to the console before the outage.
  const adminUrl = await announcedUrl(gateways[0]!, 'admin api listening');
  const signIn = await fetch(`${adminUrl}/console/sign-in`, {
    method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: `token=${ADMIN_TOKEN}`,
  });
  expect(signIn.status).toBe(303);
  const cookie = signIn.headers.get('set-cookie')!.split(';')[0]!;
  // Both gateways know warm-a and warm-b; neither has seen cold-c.
  for (const g of gateways) for (const id of ['warm-a', 'warm-b']) expect((await getWithKey(g.url, '/v1/ping', values[id]!)).status).toBe(200);

  let running = true;
  const answers: Answer[] = [];
  const load = Promise.all(
    Array.from({ length: 4 }, async (_, worker) => {
      while (running) answers.push(await getWithKey(gateways[worker % 2]!.url, '/v1/ping', values[worker < 2 ? 'warm-a' : 'warm-b']!, { timeoutMs: 15_000 }));
    }),
  );
  await eventually('the load under way', () => answers.length >= 4);
  await redisServer.kill();
  // While Redis is away, the admin API and the console answer 503 and log one line each, no stack.
  expect((await fetch(`${adminUrl}/admin/keys`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })).status).toBe(503);
  const consolePage = await fetch(`${adminUrl}/console/keys`, { headers: { cookie }, redirect: 'manual' });
  expect({ status: consolePage.status, retryAfter: consolePage.headers.get('retry-after') }).toEqual({ status: 503, retryAfter: '1' });
  expect(await consolePage.text()).toContain('service_unavailable');
  await redisServer.restart(); // empty: no persistence

  for (const g of gateways) await eventually('the loss logged', () => lostLines(g).length === 1, WAIT);
  for (const g of gateways) expect(await metric(g, 'gateway_key_store_lost')).toBe(1);
  const ready = await fetch(`${await announcedUrl(gateways[1]!, 'ops listening')}/readyz`);
  expect(ready.status).toBe(200);
  expect(await ready.json()).toMatchObject({ ready: true, checks: { keys: 'lost', redis: 'ok' } });
  const atLoss = answers.length;
  await eventually('more load on the lost store', () => answers.length >= atLoss + 41, { timeoutMs: 15_000 });
  running = false;
  await load;

  expect(answers.length).toBeGreaterThan(40);
  expect(answers.filter((a) => a.status === 401)).toEqual([]);
  for (const a of answers) expect([200, 503]).toContain(a.status);
  // Known keys on both instances still work; the unknown one cannot be judged: 503, not 401.
  for (const g of gateways) {
    expect((await getWithKey(g.url, '/v1/ping', values['warm-a']!)).status).toBe(200);
    expect((await getWithKey(g.url, '/v1/ping', values['cold-c']!)).body).toMatchObject({ error: 'service_unavailable' });
  }
  const lost = JSON.parse(lostLines(gateways[0]!)[0]!) as Record<string, unknown>;
  expect(lost).toMatchObject({ level: 'error', reason: 'key_store_lost' });
  const adminLines = gateways[0]!.output.filter((l) => l.includes('admin request failed'));
  expect(adminLines.length).toBe(1);
  expect(JSON.parse(adminLines[0]!)).toMatchObject({ level: 'warn', reason: 'redis_unavailable', err: expect.any(String) });
  expect(adminLines[0]).not.toMatch(/"stack"|\\n\s+at /);
  const consoleLines = gateways[0]!.output.filter((l) => l.includes('console request failed'));
  expect(consoleLines.length).toBe(1);
  expect(JSON.parse(consoleLines[0]!)).toMatchObject({ level: 'warn', reason: 'redis_unavailable', err: expect.any(String) });
  expect(consoleLines[0]).not.toMatch(/"stack"|\\n\s+at /);

  // Restore from the export: every key works again, the cold one included, and the metric is back to 0.
  const restored = await runKeysCli(redisServer.url, ['import', exportFile]);
  expect(restored).toMatchObject({ code: 0, stdout: expect.stringContaining('imported 3 keys') });
  for (const g of gateways) await eventually('restored', () => g.output.some((l) => l.includes('"msg":"key store restored')), WAIT);
  for (const g of gateways) {
    expect(await metric(g, 'gateway_key_store_lost')).toBe(0);
    await eventually('cold-c answered', async () => (await getWithKey(g.url, '/v1/ping', values['cold-c']!)).status === 200, WAIT);
  }
}, 90_000);

test('a FLUSHALL is caught as a loss too (by the periodic check)', async () => {
  // The import announced every key as changed: each gateway reads warm-a again, and so knows it.
  for (const g of gateways) expect((await getWithKey(g.url, '/v1/ping', values['warm-a']!)).status).toBe(200);
  execFileSync('redis-cli', ['-p', String(redisServer.port), 'FLUSHALL']);
  for (const g of gateways) await eventually('second loss logged', () => lostLines(g).length === 2, WAIT);
  for (const g of gateways) expect((await getWithKey(g.url, '/v1/ping', values['warm-a']!)).status).toBe(200);
  // The gateways do not write the marker back: the store stays lost until an operator restores it.
  expect(await stack.redis.exists('lgw:keystore:epoch')).toBe(0);
}, 30_000);
