/**
 * Redis dies in the middle of a load and comes back: the gateway keeps answering (only documented
 * codes, no 500, no hang), cached keys keep working, uncached keys get 503 (never 401), and shared
 * counting resumes once Redis is back.
 */
import { allowance, baselineMs, budget, eventually, getWithKey, type Proc } from '../kit/gateway-stack';
import { announcedUrl } from '../kit/log-lines';
import type { RedisServer } from '../kit/redis-server';
import { startRedisStack, type RedisStack } from '../kit/redis-stack';

/**
 * The gateways' REDIS_COMMAND_TIMEOUT_MS: 200 ms on an idle machine, scaled by the load measured
 * now (at most 1 s), so a busy machine's slow round trips are not taken for a Redis fault.
 */
const COMMAND_TIMEOUT_MS = Math.min(budget(200), 1000);
const UPSTREAM_TIMEOUT_MS = 2000;

let stack: RedisStack;
let redisServer: RedisServer;
let gateways: Proc[] = [];

/** Creates keys in Redis (the test's own client, which reconnects after the crash); returns their values by id. */
async function provision(ids: string[]): Promise<Record<string, string>> {
  const create = stack.provisioner();
  const values: Record<string, string> = {};
  for (const id of ids) values[id] = await create(id);
  return values;
}

beforeAll(async () => {
  stack = await startRedisStack({
    persistent: true,
    env: { OPS_PORT: '0', REDIS_COMMAND_TIMEOUT_MS: String(COMMAND_TIMEOUT_MS), UPSTREAM_TIMEOUT_MS: String(UPSTREAM_TIMEOUT_MS) },
    gateways: [{}, {}],
  });
  redisServer = stack.redisServer;
  gateways = stack.gateways;
}, budget(60_000));

afterAll(async () => {
  await stack?.stop();
});

const readyChecks = async (opsUrl: string): Promise<{ status: number; body: { ready?: boolean; checks?: Record<string, string> } }> => {
  const r = await fetch(`${opsUrl}/readyz`);
  return { status: r.status, body: (await r.json()) as { ready?: boolean; checks?: Record<string, string> } };
};

it('keeps answering through a Redis crash and counts in Redis again after it returns', async () => {
  const keys = await provision(['warm', 'cold']);
  for (const g of gateways) expect((await getWithKey(g.url, '/v1/ping', keys.warm!)).status).toBe(200);
  // A healthy answer's time on this machine now: the baseline of the answer-time budget below.
  const healthyMs = await baselineMs(() => getWithKey(gateways[0]!.url, '/v1/properties?country=GB&limit=3', keys.warm!), 5);

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
  // The load's pace on this machine now (answers in the 400 ms before the crash).
  const answeredBeforeCrash = answers.length;
  await redisServer.kill();
  await new Promise((r) => setTimeout(r, 1500));

  // During the outage: the cached key keeps working, an uncached one gets 503 (never 401).
  const cold = await getWithKey(gateways[0]!.url, '/v1/ping', keys.cold!);
  expect(cold.status).toBe(503);
  expect(cold.body).toEqual({ error: 'service_unavailable', message: expect.any(String) });
  expect(Number(cold.headers['retry-after'])).toBeGreaterThanOrEqual(1);

  // The ops listener says what is wrong.
  const opsUrl = await announcedUrl(gateways[0]!, 'ops listening');
  // Still ready (it answers: a shared outage must not pull every instance), and it says why degraded
  // (once it has noticed: waited for, as a loaded machine may take longer than the 1.5 s above).
  const degraded = await eventually('readyz naming Redis unavailable', async () => {
    const r = await readyChecks(opsUrl);
    return r.body.checks?.redis === 'unavailable' && r;
  });
  expect(degraded).toMatchObject({ status: 200, body: { ready: true, checks: { keys: 'cache_only', redis: 'unavailable' } } });
  expect(await (await fetch(`${opsUrl}/metrics`)).text()).toMatch(/gateway_redis_up 0/);

  await redisServer.restart();
  const ready = await eventually('readyz saying Redis ok again', async () => {
    const r = await readyChecks(opsUrl);
    return r.body.checks?.redis === 'ok' && r.body.checks?.keys === 'ok' && r;
  });
  expect(ready.body).toMatchObject({ ready: true, checks: { keys: 'ok', redis: 'ok' } });
  const metricsText = await (await fetch(`${opsUrl}/metrics`)).text();
  expect(metricsText).toMatch(/gateway_redis_up 1/);
  expect(metricsText).toMatch(/gateway_key_cache_total\{result="hit"\} [1-9]/);
  expect(metricsText).toMatch(/gateway_limit_decisions_total\{decision="allowed",store="local"\} [1-9]/);
  expect(metricsText).toMatch(/gateway_limit_decisions_total\{decision="allowed",store="shared"\} [1-9]/);
  running = false;
  await load;

  // More than 50 answers on an idle machine; on a loaded one, at least twice the pace of the 400 ms before the crash.
  expect(answers.length).toBeGreaterThan(Math.min(50, answeredBeforeCrash * 2));
  const statuses = new Set(answers.map((a) => a.status));
  for (const status of statuses) expect([200, 503]).toContain(status);
  expect(answers.filter((a) => a.status === 200).length).toBeGreaterThan(answers.length * 0.9);
  // No request waited longer than the command timeout plus the upstream time (with scheduling slack:
  // 500 ms on an idle machine, scaled by the load, at least four healthy answers' time measured above).
  expect(Math.max(...answers.map((a) => a.ms))).toBeLessThan(COMMAND_TIMEOUT_MS + UPSTREAM_TIMEOUT_MS + allowance(500, healthyMs));

  // Counting is shared again: a new key's requests on both instances land in one Redis counter.
  const fresh = await provision(['after']);
  await getWithKey(gateways[0]!.url, '/v1/ping', fresh.after!);
  await getWithKey(gateways[1]!.url, '/v1/ping', fresh.after!);
  const client = stack.redis;
  const counted = await eventually('three requests counted in Redis', async () => {
    await getWithKey(gateways[Date.now() % 2]!.url, '/v1/ping', fresh.after!);
    const keysInRedis = await client.keys('lgw:{after}:minute:*');
    const n = keysInRedis.length ? Number(await client.get(keysInRedis[0]!)) : 0;
    return n >= 3 && n;
  }, { timeoutMs: 5000, intervalMs: 100 });
  expect(counted).toBeGreaterThanOrEqual(3);
  // Each switch is logged once per instance, not per request.
  for (const g of gateways) {
    expect(g.output.filter((l) => l.includes('shared counters unavailable')).length).toBeLessThanOrEqual(2);
    expect(g.output.filter((l) => l.includes('redis connection lost')).length).toBeGreaterThanOrEqual(1);
  }
}, budget(60_000));
