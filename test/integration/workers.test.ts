/**
 * GATEWAY_WORKERS=2 (node's cluster module) against a real redis-server: the two workers count
 * exactly together, a cursor made by one opens on the other (the primary's random secret, none
 * being configured), the primary's /metrics adds up both workers, SIGHUP reaches both, a killed
 * worker is replaced, SIGTERM under load answers every in-flight request; and without a shared
 * Redis, start-up refuses with one line.
 */
import { execFileSync } from 'node:child_process';
import Redis from 'ioredis';
import { Agent, request } from 'undici';
import {
  awayFromMinuteEdge, checkAnswersOf, getWithKey, gatewayEnv, makeTempDir, randomKeyValue, removeTempDirs, runToExit, startStub,
  UNLIMITED, writeGatewayConfig, writeKeysFile, type Answer, type Stub,
} from '../kit/gateway-stack';
import { startProcess, type RunningProcess } from '../kit/processes';
import { announcedUrl, requestIdText, waitForLine } from '../kit/log-lines';
import { startRedis, type RedisServer } from '../kit/redis-server';

jest.setTimeout(60_000);

const exactValue = randomKeyValue('workers-exact');
const freeValue = randomKeyValue('workers-free');
/** The stub data service holds answers to `country=FR` this long, so they are in flight when SIGTERM comes. */
const SLOW_MS = 1500;

let redisServer: RedisServer;
let redis: Redis;
let stub: Stub;
let gateway: RunningProcess;
let opsUrl: string;
let adminUrl: string;
/** Every request sent to the public port, for the /metrics total. */
let sent = 0;

const page = (country: string): string =>
  JSON.stringify({ items: [{ id: `${country}-1`, country, listing_type: 'sale', property_type: 'house' }], next_after: `${country}-1` });

beforeAll(async () => {
  redisServer = await startRedis();
  redis = new Redis(redisServer.url);
  stub = await startStub((req, res) => {
    const country = new URL(req.url ?? '/', 'http://stub').searchParams.get('country') ?? 'GB';
    setTimeout(() => {
      res.setHeader('content-type', 'application/json');
      res.end(page(country));
    }, country === 'FR' ? SLOW_MS : 0);
  });
  const dir = makeTempDir();
  const keysFile = writeKeysFile(
    [
      { id: 'workers-exact', value: exactValue, tier: 'standard', countries: ['GB'], address: '127.0.0.1', status: 'active', limits: { per_minute: 137, per_day: 100_000 } },
      { id: 'workers-free', value: freeValue, tier: 'standard', countries: ['GB', 'FR'], address: '127.0.0.1', status: 'active', limits: { ...UNLIMITED } },
    ],
    dir,
  );
  // The workers start one after the other (see gateway/workers/supervisor.ts): on a loaded machine
  // that takes longer than the kit's usual start-up wait.
  gateway = checkAnswersOf(
    await startProcess('gateway/main.js', {
      ...gatewayEnv(keysFile, writeGatewayConfig(undefined, dir)),
      BACKEND_URL: stub.url,
      GATEWAY_WORKERS: '2',
      REDIS_URL: redisServer.url,
      // Exactness on a loaded 2-core machine: a timed-out command would (by design) count per worker.
      REDIS_COMMAND_TIMEOUT_MS: '3000',
      OPS_PORT: '0',
      ADMIN_TOKEN: 'workers-admin-token-0123456789',
      ADMIN_PORT: '0',
      // Unset (empty means unset): the primary makes one secret and hands it to both workers.
      CURSOR_SECRET: '',
    }, 60_000),
  );
  opsUrl = await announcedUrl(gateway, 'ops listening');
  adminUrl = await announcedUrl(gateway, 'admin api listening');
}, 90_000);

afterAll(async () => {
  await gateway?.stop();
  await stub?.close();
  redis?.disconnect();
  await redisServer?.stop();
  removeTempDirs();
});

/** A request on a fresh connection (the primary hands connections to the workers in turn). */
async function call(path: string, value: string): Promise<Answer> {
  sent++;
  return getWithKey(gateway.url, path, value, { timeoutMs: 20_000 });
}

/** The worker that answered, from its request log line (found by the answer's X-Request-Id). */
async function servedBy(answer: Answer): Promise<number> {
  const line = await waitForLine(gateway, requestIdText(String(answer.headers['x-request-id'])));
  return (JSON.parse(line) as { worker: number }).worker;
}

/** The pids of the primary's live worker processes. */
function workerPids(): number[] {
  try {
    return execFileSync('pgrep', ['-P', String(gateway.child.pid)], { encoding: 'utf8' }).trim().split('\n').filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

async function readyz(): Promise<{ status: number; body: { ready: boolean; checks: { workers?: unknown } } }> {
  const answer = await fetch(`${opsUrl}/readyz`);
  return { status: answer.status, body: (await answer.json()) as { ready: boolean; checks: { workers?: unknown } } };
}

/** The workers that logged `admin api listening`. */
const adminWorkers = (): number[] =>
  gateway.output.filter((l) => l.includes('"msg":"admin api listening"')).map((l) => (JSON.parse(l) as { worker: number }).worker);

it('starts two workers behind one port, both answering, and says it is ready', async () => {
  // Each worker's own line may follow the primary's "listening" (they write to the same output, asynchronously).
  const until = Date.now() + 10_000;
  while (gateway.output.filter((l) => l.includes('"msg":"worker listening"')).length < 2 && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
  expect(gateway.output.filter((l) => l.includes('"msg":"worker listening"'))).toHaveLength(2);
  // One worker serves the admin listener (the console's sessions live in one process).
  expect(adminWorkers()).toEqual([1]);
  expect((await fetch(`${adminUrl}/console`)).status).toBeLessThan(500);
  expect(workerPids()).toHaveLength(2);
  const workers = new Set<number>();
  for (let i = 0; i < 8; i++) {
    const answer = await call('/v1/ping', freeValue);
    expect(answer.status).toBe(200);
    workers.add(await servedBy(answer));
  }
  expect([...workers].sort()).toEqual([1, 2]);
  const state = await readyz();
  expect(state.status).toBe(200);
  expect(state.body.checks.workers).toEqual({ worker_1: 'ok', worker_2: 'ok' });
});

it('counts exactly across the workers: 300 concurrent requests, exactly the per-minute limit of 137 succeeds', async () => {
  await awayFromMinuteEdge(15_000);
  const answers = await Promise.all(Array.from({ length: 300 }, () => call('/v1/ping', exactValue)));
  expect(answers.filter((a) => a.status === 200)).toHaveLength(137);
  expect(answers.filter((a) => a.status === 429 && a.body?.error === 'rate_limited')).toHaveLength(300 - 137);
  const keys = await redis.keys('lgw:{workers-exact}:minute:*');
  const values = keys.length ? await redis.mget(keys) : [];
  expect(values.reduce((sum, v) => sum + Number(v ?? 0), 0)).toBe(137);
});

it('a cursor made by one worker opens on the other (one secret, made by the primary)', async () => {
  expect(gateway.output.some((l) => l.includes('CURSOR_SECRET is not set: the workers share a random secret'))).toBe(true);
  const first = await call('/v1/properties?country=GB&limit=5', freeValue);
  expect(first.status).toBe(200);
  const issuer = await servedBy(first);
  const cursor = String(first.body.next_cursor);
  // Connections alternate between the workers: within a few, one reaches the other worker.
  let other: Answer | undefined;
  for (let i = 0; i < 10 && !other; i++) {
    const next = await call(`/v1/properties?country=GB&limit=5&cursor=${cursor}`, freeValue);
    expect(next.status).toBe(200);
    if ((await servedBy(next)) !== issuer) other = next;
  }
  expect(other).toBeDefined();
});

it("the primary's /metrics adds up both workers: the request total equals the requests sent", async () => {
  const text = await (await fetch(`${opsUrl}/metrics`)).text();
  const total = text
    .split('\n')
    .filter((l) => l.startsWith('gateway_requests_total{'))
    .reduce((sum, l) => sum + Number(l.slice(l.lastIndexOf(' ') + 1)), 0);
  expect(total).toBe(sent);
  expect(text).toMatch(/^gateway_redis_up 1$/m);
});

it('SIGHUP reaches every worker', async () => {
  const before = gateway.output.length;
  gateway.child.kill('SIGHUP');
  const deadline = Date.now() + 10_000;
  const reloaded = (): number[] =>
    gateway.output
      .slice(before)
      .filter((l) => l.includes('"msg":"configuration reloaded"') && l.includes('"reason":"SIGHUP"'))
      .map((l) => (JSON.parse(l) as { worker: number }).worker);
  while (reloaded().length < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  expect(reloaded().sort()).toEqual([1, 2]);
});

it('a killed worker is replaced and logged, and the gateway keeps answering', async () => {
  const [victim] = workerPids();
  process.kill(victim!, 'SIGKILL');
  const died = await waitForLine(gateway, '"msg":"worker exited: starting a replacement"');
  expect(JSON.parse(died)).toMatchObject({ level: 'error', pid: victim, signal: 'SIGKILL' });
  const replacement = JSON.parse(await waitForLine(gateway, '"msg":"replacement worker listening"', 20_000)) as { worker: number };
  // The admin listener's worker is replaced by one that serves it in turn.
  const victimId = (JSON.parse(died) as { worker: number }).worker;
  if (victimId === 1) {
    const until = Date.now() + 20_000;
    while (adminWorkers().length < 2 && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
    expect(adminWorkers()).toEqual([1, replacement.worker]);
    // ADMIN_PORT=0 here: the replacement's listener has a port of its own (a configured port is kept).
    const last = gateway.output.filter((l) => l.includes('"msg":"admin api listening"')).pop()!;
    adminUrl = `http://127.0.0.1:${(JSON.parse(last) as { port: number }).port}`;
  } else {
    expect(adminWorkers()).toEqual([1]);
  }
  expect((await fetch(`${adminUrl}/console`)).status).toBeLessThan(500);
  expect(workerPids()).toHaveLength(2);
  expect(workerPids()).not.toContain(victim);
  for (let i = 0; i < 6; i++) expect((await call('/v1/ping', freeValue)).status).toBe(200);
  const deadline = Date.now() + 10_000;
  let state = await readyz();
  while (Object.keys(state.body.checks.workers as object).length !== 2 && Date.now() < deadline) state = await readyz();
  expect(state.status).toBe(200);
});

it('SIGTERM under load: every in-flight request is answered, /readyz says 503 while draining, and all exit 0', async () => {
  const agent = new Agent({ connections: 40, keepAliveTimeout: 30_000 });
  const slow = async (): Promise<number | string> => {
    try {
      const answer = await request(`${gateway.url}/v1/properties?country=FR&limit=5`, { headers: { 'x-api-key': freeValue }, dispatcher: agent });
      await answer.body.text();
      return answer.statusCode;
    } catch (err) {
      return (err as { code?: string }).code ?? 'error';
    }
  };
  const inFlight = Array.from({ length: 30 }, slow);
  // Every one of the 30 has reached the data service, so each is in flight in one of the workers.
  const deadline = Date.now() + 20_000;
  while (stub.requests.filter((r) => r.url.includes('country=FR')).length < 30 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  expect(stub.requests.filter((r) => r.url.includes('country=FR'))).toHaveLength(30);
  const exited = new Promise<number | null>((resolve) => gateway.child.once('exit', (code) => resolve(code)));
  gateway.child.kill('SIGTERM');
  await waitForLine(gateway, '"msg":"shutting down: draining every worker"');
  const draining = await readyz();
  expect(draining.status).toBe(503);
  expect(draining.body.checks.workers).toBe('draining');
  expect(await Promise.all(inFlight)).toEqual(Array(30).fill(200));
  expect(await exited).toBe(0);
  const stopped = gateway.output.filter((l) => l.includes('"msg":"stopped"'));
  expect(stopped).toHaveLength(3); // both workers, then the primary
  await agent.close();
});

it('refuses GATEWAY_WORKERS=2 without a shared Redis, with one line naming the variable', async () => {
  const dir = makeTempDir();
  const result = await runToExit('gateway/main.js', gatewayEnv(writeKeysFile([], dir), writeGatewayConfig(undefined, dir), { GATEWAY_WORKERS: '2' }));
  expect(result.code).toBe(1);
  expect(result.stdout).toBe('');
  const lines = result.stderr.trim().split('\n');
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatch(/GATEWAY_WORKERS.*shared Redis/);
  const auto = await runToExit('gateway/main.js', gatewayEnv(writeKeysFile([], dir), writeGatewayConfig(undefined, dir), { GATEWAY_WORKERS: 'auto' }));
  expect(auto.code).toBe(1);
  expect(auto.stderr.trim().split('\n')).toHaveLength(1);
});
