/**
 * Redis dies in the middle of a load and comes back: the gateway keeps answering (only documented
 * codes, no 500, no hang), cached keys keep working, uncached keys get 503 (never 401), and shared
 * counting resumes once Redis is back.
 */
import Redis from 'ioredis';
import { fixtureListings } from '../fixtures/listings';
import {
  getWithKey, makeTempDir, removeTempDirs, startBackend, startGateway, writeGatewayConfig, writeKeysFile,
  writeListingsFile, type Proc,
} from '../kit/gateway-stack';
import { announcedUrl } from '../kit/log-lines';
import { keyProvisioner } from '../kit/redis-keys';
import { startRedis, type RedisServer } from '../kit/redis-server';

const COMMAND_TIMEOUT_MS = 200;
const UPSTREAM_TIMEOUT_MS = 2000;

let redisServer: RedisServer;
let backend: Proc;
let gateways: Proc[] = [];
let gatewayConfigFile: string;

/** Creates keys in Redis on a connection of its own; returns their values by id. */
async function provision(ids: string[]): Promise<Record<string, string>> {
  const client = new Redis(redisServer.url);
  try {
    const create = keyProvisioner(client, gatewayConfigFile);
    const values: Record<string, string> = {};
    for (const id of ids) values[id] = await create(id);
    return values;
  } finally {
    client.disconnect();
  }
}

beforeAll(async () => {
  redisServer = await startRedis({ persistent: true });
  backend = await startBackend(writeListingsFile(fixtureListings()));
  const dir = makeTempDir();
  gatewayConfigFile = writeGatewayConfig(undefined, dir);
  const env = { OPS_PORT: '0', REDIS_URL: redisServer.url, KEY_STORE: 'redis', REDIS_COMMAND_TIMEOUT_MS: String(COMMAND_TIMEOUT_MS), UPSTREAM_TIMEOUT_MS: String(UPSTREAM_TIMEOUT_MS) };
  gateways = await Promise.all([0, 1].map(() => startGateway({ backendUrl: backend.url, keysFile: writeKeysFile([], dir), gatewayConfig: gatewayConfigFile, env })));
}, 60_000);

afterAll(async () => {
  await Promise.all(gateways.map((g) => g.stop()));
  await backend?.stop();
  await redisServer?.stop();
  removeTempDirs();
});

it('keeps answering through a Redis crash and counts in Redis again after it returns', async () => {
  const keys = await provision(['warm', 'cold']);
  for (const g of gateways) expect((await getWithKey(g.url, '/v1/ping', keys.warm!)).status).toBe(200);

  const answers: Array<{ status: number; error?: string; ms: number }> = [];
  let running = true;
  const load = Promise.all(
    Array.from({ length: 8 }, async (_, worker) => {
      while (running) {
        const started = Date.now();
        const a = await getWithKey(gateways[worker % 2]!.url, '/v1/properties?country=GB&limit=3', keys.warm!, { timeoutMs: 15_000 });
        answers.push({ status: a.status, error: a.body?.error, ms: Date.now() - started });
      }
    }),
  );
  await new Promise((r) => setTimeout(r, 400));
  await redisServer.kill();
  await new Promise((r) => setTimeout(r, 1500));

  // During the outage: the cached key keeps working, an uncached one gets 503 (never 401).
  const cold = await getWithKey(gateways[0]!.url, '/v1/ping', keys.cold!);
  expect(cold.status).toBe(503);
  expect(cold.body).toEqual({ error: 'service_unavailable', message: expect.any(String) });
  expect(Number(cold.headers['retry-after'])).toBeGreaterThanOrEqual(1);

  // The ops listener says what is wrong.
  const opsUrl = await announcedUrl(gateways[0]!, 'ops listening');
  // Still ready (it answers: a shared outage must not pull every instance), and it says why degraded.
  const degraded = await fetch(`${opsUrl}/readyz`);
  expect(degraded.status).toBe(200);
  expect(await degraded.json()).toMatchObject({ ready: true, checks: { keys: 'cache_only', redis: 'unavailable' } });
  expect(await (await fetch(`${opsUrl}/metrics`)).text()).toMatch(/gateway_redis_up 0/);

  await redisServer.restart();
  await new Promise((r) => setTimeout(r, 1500));
  const ready = await fetch(`${opsUrl}/readyz`);
  expect(await ready.json()).toMatchObject({ ready: true, checks: { keys: 'ok', redis: 'ok' } });
  const metricsText = await (await fetch(`${opsUrl}/metrics`)).text();
  expect(metricsText).toMatch(/gateway_redis_up 1/);
  expect(metricsText).toMatch(/gateway_key_cache_total\{result="hit"\} [1-9]/);
  expect(metricsText).toMatch(/gateway_limit_decisions_total\{decision="allowed",store="local"\} [1-9]/);
  expect(metricsText).toMatch(/gateway_limit_decisions_total\{decision="allowed",store="shared"\} [1-9]/);
  running = false;
  await load;

  expect(answers.length).toBeGreaterThan(50);
  const statuses = new Set(answers.map((a) => a.status));
  for (const status of statuses) expect([200, 503]).toContain(status);
  expect(answers.filter((a) => a.status === 200).length).toBeGreaterThan(answers.length * 0.9);
  // No request waited longer than the command timeout plus the upstream time (with scheduling slack).
  expect(Math.max(...answers.map((a) => a.ms))).toBeLessThan(COMMAND_TIMEOUT_MS + UPSTREAM_TIMEOUT_MS + 500);

  // Counting is shared again: a new key's requests on both instances land in one Redis counter.
  const fresh = await provision(['after']);
  await getWithKey(gateways[0]!.url, '/v1/ping', fresh.after!);
  await getWithKey(gateways[1]!.url, '/v1/ping', fresh.after!);
  const client = new Redis(redisServer.url);
  try {
    const deadline = Date.now() + 5000;
    let counted = 0;
    while (Date.now() < deadline) {
      await getWithKey(gateways[Date.now() % 2]!.url, '/v1/ping', fresh.after!);
      const keysInRedis = await client.keys('lgw:{after}:minute:*');
      counted = keysInRedis.length ? Number(await client.get(keysInRedis[0]!)) : 0;
      if (counted >= 3) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(counted).toBeGreaterThanOrEqual(3);
  } finally {
    client.disconnect();
  }
  // Each switch is logged once per instance, not per request.
  for (const g of gateways) {
    expect(g.output.filter((l) => l.includes('shared counters unavailable')).length).toBeLessThanOrEqual(2);
    expect(g.output.filter((l) => l.includes('redis connection lost')).length).toBeGreaterThanOrEqual(1);
  }
}, 60_000);
