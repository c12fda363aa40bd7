/**
 * Redis failing under load, through a TCP proxy between the gateways and redis-server: frozen
 * (blackholed: connections accepted, nothing answered) then thawed, frozen then reset, slowed below
 * and above the command timeout, connections reset over and over; and Redis unreachable when a
 * gateway starts. A crash (SIGKILL and restart) is held by redis-outage.test.ts.
 *
 * Promises held here: no 500 and no hung request (each answer within the command timeout plus the
 * upstream time), only 200 or 503 `service_unavailable` for a working key, 503 and never 401 for a
 * key no instance has cached, the commands sent to a frozen Redis bounded (no queue that grows
 * with the load), shared counting back within seconds of recovery and exact again, `/readyz` ready
 * but naming Redis unavailable while it is unreachable at start-up, and no key value in any log line or Redis command.
 */
import type Redis from 'ioredis';
import {
  allowance,
  awayFromMinuteEdge,
  baselineMs,
  budget,
  eventually,
  expectError,
  getWithKey,
  linesWithSecrets,
  plkKeyValue,
  randomKeyValue,
  removeTempDirs,
  send,
  sleep,
  startGateway,
  withBadChecksum,
  type Answer,
  type Proc,
} from '../kit/gateway-stack';
import { announcedUrl } from '../kit/log-lines';
import type { RedisServer } from '../kit/redis-server';
import { startRedisStack, type RedisStack } from '../kit/redis-stack';
import { startStubUpstream, type StubUpstream } from '../kit/stub-upstream';
import { startTcpProxy, type TcpProxy } from '../kit/tcp-proxy';

/**
 * The gateways' REDIS_COMMAND_TIMEOUT_MS: 200 ms on an idle machine, scaled by the load measured
 * now (at most 1 s), so a busy machine's slow round trips are not taken for a Redis fault.
 */
const COMMAND_TIMEOUT_MS = Math.min(budget(200), 1000);
const UPSTREAM_TIMEOUT_MS = 2000;
/**
 * The longest any answer may take: the command timeout plus the upstream time, with slack for a
 * loaded machine (1.5 s idle, scaled by the load, at least four healthy answers' time measured at start).
 */
let MAX_ANSWER_MS = COMMAND_TIMEOUT_MS + UPSTREAM_TIMEOUT_MS + 1500;
/** Shared counting is back "within seconds": 5 s on an idle machine, scaled by the load. */
const RECOVERY_MS = (): number => budget(5000);
const LIST = '/v1/properties?country=GB&limit=3';

let stack: RedisStack;
let redisServer: RedisServer;
let proxy: TcpProxy;
let stub: StubUpstream;
let direct: Redis;
let gatewayConfigFile: string;
let keysFile: string;
let gateways: Proc[] = [];
const keyValues: string[] = [];

/** The gateways' environment; REDIS_URL through the proxy on `proxyPort` (0: the stack's own proxy). */
const env = (proxyPort: number): Record<string, string> => ({
  OPS_PORT: '0',
  ...(proxyPort ? { REDIS_URL: `redis://127.0.0.1:${proxyPort}` } : {}),
  KEY_STORE: 'redis',
  REDIS_COMMAND_TIMEOUT_MS: String(COMMAND_TIMEOUT_MS),
  UPSTREAM_TIMEOUT_MS: String(UPSTREAM_TIMEOUT_MS),
});

/** Creates keys in Redis (directly, not through the proxy); returns their values. */
const provision = (id: string, limits: { per_minute?: number; per_day?: number; per_month?: number } = {}): Promise<string> =>
  stack.provisioner((value) => keyValues.push(value))(id, limits);

beforeAll(async () => {
  stub = await startStubUpstream();
  // The gateways reach Redis through the proxy; the test's own client goes straight to it.
  stack = await startRedisStack({
    backendUrl: stub.url,
    env: env(0),
    gateways: [{}, {}],
    redisUrl: async (server) => {
      proxy = await startTcpProxy(server.port, { resp: true });
      return `redis://127.0.0.1:${proxy.port}`;
    },
  });
  ({ redisServer, redis: direct, keysFile, gatewayConfig: gatewayConfigFile } = stack);
  gateways = [...stack.gateways];
  // A healthy answer's time on this machine now: the baseline of the answer-time budget.
  const value = await provision('baseline');
  const healthyMs = await baselineMs(() => getWithKey(gateways[0]!.url, LIST, value), 5);
  MAX_ANSWER_MS = COMMAND_TIMEOUT_MS + UPSTREAM_TIMEOUT_MS + allowance(1500, healthyMs);
}, budget(60_000));

afterAll(async () => {
  await stack?.stop();
  await proxy?.close();
  await stub?.close();
  removeTempDirs();
});

interface Sample {
  status: number;
  error?: string;
  ms: number;
}

/** `workers` loops of requests with `keyValue`, spread over the gateways, until stopped. */
function startLoad(keyValue: string, workers = 6): { stop(): Promise<Sample[]>; answered(n?: number): Promise<void>; readonly count: number } {
  const samples: Sample[] = [];
  let running = true;
  const loops = Array.from({ length: workers }, async (_, w) => {
    while (running) {
      const started = Date.now();
      try {
        const a = await getWithKey(gateways[w % gateways.length]!.url, LIST, keyValue, { timeoutMs: 15_000 });
        samples.push({ status: a.status, error: a.body?.error, ms: Date.now() - started });
      } catch (err) {
        samples.push({ status: 0, error: (err as Error).message, ms: Date.now() - started });
      }
    }
  });
  return {
    get count() {
      return samples.length;
    },
    /** Resolves once `n` more answers have come (the load is under way). */
    answered(n = 12) {
      const from = samples.length;
      return eventually(`${n} more answers under load`, () => samples.length >= from + n, { timeoutMs: 15_000 }).then(() => undefined);
    },
    async stop() {
      running = false;
      await Promise.all(loops);
      return samples;
    },
  };
}

/** No 500, no hang, no connection failure: only 200 or 503 service_unavailable, each within MAX_ANSWER_MS. */
function expectSurvived(samples: Sample[], minimumOk = 0.9): void {
  expect(samples.length).toBeGreaterThan(30);
  const odd = samples.filter((s) => !(s.status === 200 || (s.status === 503 && s.error === 'service_unavailable')));
  expect(odd).toEqual([]);
  expect(Math.max(...samples.map((s) => s.ms))).toBeLessThan(MAX_ANSWER_MS);
  expect(samples.filter((s) => s.status === 200).length).toBeGreaterThanOrEqual(samples.length * minimumOk);
}

const counted = async (keyId: string): Promise<number> => {
  const keys = await direct.keys(`lgw:{${keyId}}:minute:*`);
  const values = keys.length ? await direct.mget(keys) : [];
  return values.reduce((sum, v) => sum + Number(v ?? 0), 0);
};

/**
 * Milliseconds from now until requests on both instances are counted in Redis one for one again
 * (four requests in a row, each seen in the shared counter). Fails after 10 s (scaled by the load).
 */
async function untilSharedCountingIsBack(label: string): Promise<number> {
  const started = Date.now();
  const id = `back-${label}`;
  const value = await provision(id);
  await eventually(`${label}: shared counting back`, async () => {
    let inStep = 0;
    for (let i = 0; i < 4; i++) {
      const before = await counted(id);
      const a = await getWithKey(gateways[i % 2]!.url, '/v1/ping', value);
      if (a.status === 200 && (await counted(id)) === before + 1) inStep++;
    }
    return inStep === 4;
  }, { timeoutMs: 10_000, intervalMs: 100 });
  return Date.now() - started;
}

/** Every instance has the key cached, as in steady state. */
async function warm(value: string): Promise<void> {
  for (const g of gateways) expect((await getWithKey(g.url, '/v1/ping', value)).status).toBe(200);
}

const recoveries: Record<string, number> = {};
const freezeFigures: Record<string, number> = {};
afterAll(() => {
  process.stdout.write(`redis faults: shared counting back after (ms) ${JSON.stringify(recoveries)}; freeze ${JSON.stringify(freezeFigures)}\n`);
});

describe('Redis frozen mid-load', () => {
  test('blackholed for 3 s, then thawed: no 500, no hang, cold keys 503 (never 401), commands to the frozen Redis bounded', async () => {
    const warmValue = await provision('freeze-warm');
    const coldValue = await provision('freeze-cold');
    await warm(warmValue);
    const load = startLoad(warmValue);
    await sleep(500);
    // The load's pace on this machine now (answers in the half second before the freeze).
    const answeredBeforeFreeze = load.count;

    proxy.blackhole();
    const frozenAt = Date.now();
    const commandsBefore = proxy.commands.length;
    const answeredBefore = load.count;
    await sleep(1000);
    const coldStarted = Date.now();
    const cold = await getWithKey(gateways[0]!.url, '/v1/ping', coldValue);
    const coldMs = Date.now() - coldStarted;
    const unknown = await getWithKey(gateways[1]!.url, '/v1/ping', randomKeyValue('unknown'));
    await sleep(2000);
    const commandsDuringFreeze = proxy.commands.length - commandsBefore;
    const answeredDuringFreeze = load.count - answeredBefore;
    const frozenMs = Date.now() - frozenAt;
    proxy.pass();
    await load.answered();
    const samples = await load.stop();

    Object.assign(freezeFigures, { frozenMs, answeredDuringFreeze, commandsDuringFreeze, slowestMs: Math.max(...samples.map((x) => x.ms)) });
    expectSurvived(samples);
    // A key no instance has cached cannot be checked: 503 with Retry-After, never 401; the same for an unknown key.
    expectError(cold, 'service_unavailable');
    expectError(unknown, 'service_unavailable');
    expect(coldMs).toBeLessThan(MAX_ANSWER_MS);
    // The gateway stops asking a Redis that does not answer: the commands it sent during the
    // freeze are a small bounded number (about one round per second of freeze and per
    // concurrent request), not one or more per answered request.
    // Cached keys keep being answered through the freeze: more than 50 on an idle machine, and at
    // least a quarter of the pace measured just before it on a loaded one.
    expect(answeredDuringFreeze).toBeGreaterThan(Math.min(50, (answeredBeforeFreeze * frozenMs) / 500 / 4));
    expect(commandsDuringFreeze).toBeLessThanOrEqual((Math.ceil(frozenMs / 1000) + 1) * 6 * 2 + 10);
    expect(commandsDuringFreeze).toBeLessThan(answeredDuringFreeze / 2);

    recoveries.thawed = await untilSharedCountingIsBack('thawed');
    expect(recoveries.thawed).toBeLessThan(RECOVERY_MS());
  }, budget(60_000));

  test('blackholed for 3 s, then every connection reset: the gateways reconnect and count in Redis again', async () => {
    const warmValue = await provision('freeze-reset-warm');
    await warm(warmValue);
    const load = startLoad(warmValue);
    await load.answered();
    proxy.blackhole();
    await sleep(3000);
    proxy.reset();
    await sleep(200);
    proxy.pass();
    await load.answered();
    expectSurvived(await load.stop());
    recoveries.reset = await untilSharedCountingIsBack('reset');
    expect(recoveries.reset).toBeLessThan(RECOVERY_MS());
  }, budget(60_000));
});

describe('Redis slowed mid-load', () => {
  test('slower but well within the command timeout: every request counted exactly in Redis, across two instances', async () => {
    // Two more instances with a 2 s command timeout, so the margin over the added 100 ms round trip
    // holds on a loaded machine (the instances with the short timeout would rightly fall back to counting locally).
    const patient = await Promise.all([0, 1].map(() =>
      startGateway({ backendUrl: stub.url, keysFile, gatewayConfig: gatewayConfigFile, env: { ...env(proxy.port), REDIS_COMMAND_TIMEOUT_MS: '2000' } }),
    ));
    try {
      await awayFromMinuteEdge(15_000);
      const value = await provision('slow-exact', { per_minute: 40 });
      for (const g of patient) expect((await getWithKey(g.url, '/v1/ping', value)).status).toBe(200);
      proxy.delay(50);
      const answers = await Promise.all(
        Array.from({ length: 120 }, (_, i) => getWithKey(patient[i % 2]!.url, '/v1/ping', value, { timeoutMs: 15_000 })),
      );
      expect(answers.filter((a) => a.status === 200).length + 2).toBe(40);
      for (const a of answers.filter((x) => x.status !== 200)) expectError(a, 'rate_limited');
      expect(await counted('slow-exact')).toBe(40);
      for (const g of patient) expect(g.output.filter((l) => l.includes('shared counters unavailable'))).toEqual([]);
    } finally {
      proxy.pass();
      await Promise.all(patient.map(async (g) => { await g.stop(); await g.closed; }));
      expect(linesWithSecrets(patient.flatMap((g) => g.output), keyValues)).toEqual([]);
    }
  }, budget(60_000));

  test('slower than the command timeout for 3 s: no 500, no hang, then shared counting back within seconds', async () => {
    const warmValue = await provision('slow-warm');
    const coldValue = await provision('slow-cold');
    await warm(warmValue);
    const load = startLoad(warmValue);
    await load.answered();
    proxy.delay(COMMAND_TIMEOUT_MS * 2);
    await sleep(1000);
    const cold = await getWithKey(gateways[0]!.url, '/v1/ping', coldValue);
    await sleep(2000);
    proxy.pass();
    await load.answered();
    expectSurvived(await load.stop());
    expectError(cold, 'service_unavailable');
    recoveries.slowed = await untilSharedCountingIsBack('slowed');
    expect(recoveries.slowed).toBeLessThan(RECOVERY_MS());
  }, budget(60_000));
});

describe('Redis connections reset over and over', () => {
  test('reset every 300 ms for 3 s: no 500, no hang, then shared counting back within seconds', async () => {
    const warmValue = await provision('flap-warm');
    await warm(warmValue);
    const load = startLoad(warmValue);
    await load.answered();
    const until = Date.now() + 3000;
    while (Date.now() < until) {
      proxy.reset();
      await sleep(300);
      proxy.pass();
      await sleep(300);
    }
    await load.answered();
    // Each reconnection re-subscribes and so empties the key cache (a change announced while
    // unsubscribed would be lost); a look-up made before the next reset has read the key again is
    // then a cold key while Redis is away: 503, by design. That share was 5-11 % over CI runs.
    expectSurvived(await load.stop(), 0.8);
    recoveries.flapping = await untilSharedCountingIsBack('flapping');
    expect(recoveries.flapping).toBeLessThan(RECOVERY_MS());
  }, budget(60_000));
});

describe('after the faults', () => {
  test('limits are exact again across both instances', async () => {
    await awayFromMinuteEdge(15_000);
    const value = await provision('after-exact', { per_minute: 50 });
    await warm(value);
    // Ten callers at a time, alternating instances: on a loaded machine 150 at once would push
    // Redis round trips past the command timeout, and the gateways would (rightly) count locally.
    const answers: Answer[] = [];
    await Promise.all(Array.from({ length: 10 }, async (_, w) => {
      for (let i = w; i < 150; i += 10) answers.push(await getWithKey(gateways[i % 2]!.url, '/v1/ping', value, { timeoutMs: 15_000 }));
    }));
    expect(answers).toHaveLength(150);
    expect(answers.filter((a) => a.status === 200).length + 2).toBe(50);
    expect(answers.filter((a) => a.status === 429 && a.body?.error === 'rate_limited').length).toBe(150 + 2 - 50);
    expect(await counted('after-exact')).toBe(50);
  }, budget(60_000));
});

describe('Redis unreachable when a gateway starts', () => {
  test('/readyz says ready with Redis unavailable, uncached keys get 503 (never 401), and all is well once Redis is reachable', async () => {
    const value = await provision('startup');
    const down = await startTcpProxy(redisServer.port);
    down.reset();
    const late = await startGateway({ backendUrl: stub.url, keysFile, gatewayConfig: gatewayConfigFile, env: env(down.port) });
    try {
      const opsUrl = await announcedUrl(late, 'ops listening');
      expect((await fetch(`${opsUrl}/healthz`)).status).toBe(200);
      const degraded = await fetch(`${opsUrl}/readyz`);
      expect(degraded.status).toBe(200);
      expect(await degraded.json()).toMatchObject({ ready: true, checks: { keys: 'cache_only', redis: 'unavailable' } });

      for (const path of ['/v1/ping', LIST]) {
        expectError(await getWithKey(late.url, path, value), 'service_unavailable');
        expectError(await getWithKey(late.url, path, randomKeyValue('never-issued')), 'service_unavailable');
      }
      // What needs no store is still answered as usual.
      expectError(await send(late.url, '/v1/ping'), 'unauthenticated');
      expectError(await getWithKey(late.url, '/v1/ping', withBadChecksum(plkKeyValue())), 'unauthenticated');
      expectError(await send(late.url, '/v1/nowhere'), 'not_found');

      down.pass();
      const started = Date.now();
      await eventually('the key served once Redis is reachable', async () => (await getWithKey(late.url, '/v1/ping', value)).status === 200, { timeoutMs: 10_000, intervalMs: 100 });
      expect(Date.now() - started).toBeLessThan(RECOVERY_MS());
      const ready = await fetch(`${opsUrl}/readyz`);
      expect(ready.status).toBe(200);
      expect(await ready.json()).toMatchObject({ ready: true, checks: { redis: 'ok' } });
    } finally {
      await late.stop();
      await late.closed;
      await down.close();
    }
    expect(linesWithSecrets(late.output, keyValues)).toEqual([]);
  }, budget(60_000));
});

describe('secrets through all of it', () => {
  test('no key value in any command sent to Redis', () => {
    expect(proxy.commands.length).toBeGreaterThan(100);
    const leaks = proxy.commands.filter((c) => linesWithSecrets([c.args.join(' ')], keyValues).length > 0);
    expect(leaks).toEqual([]);
  });

  test('no key value in any gateway log line, outages included', async () => {
    await Promise.all(gateways.map(async (g) => { await g.stop(); await g.closed; }));
    const lines = gateways.flatMap((g) => g.output);
    expect(lines.some((l) => l.includes('redis connection lost'))).toBe(true);
    expect(linesWithSecrets(lines, keyValues)).toEqual([]);
  });
});
