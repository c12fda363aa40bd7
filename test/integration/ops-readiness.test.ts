/**
 * Readiness is about this instance (docs/guarantees.md): `/readyz` answers 503 while the gateway starts,
 * 200 while it can answer even with Redis or the data service away (the body names each
 * dependency's state), and 503 while it drains after SIGTERM: the ops listener keeps answering
 * until the process exits, so a load balancer sees a drain, not a crash.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { request } from 'undici';
import {
  DEFAULT_TIERS, closedPort, cursorSecret, getWithKey, makeTempDir, randomKeyValue, removeTempDirs, eventually, sleep, startGateway, startStub,
  writeGatewayConfig, writeKeysFile, type Proc, type Stub,
} from '../kit/gateway-stack';
import { announcedUrl, waitForLine } from '../kit/log-lines';
import { ROOT } from '../kit/processes';
import { freePort } from '../kit/redis-server';

const value = randomKeyValue('ready');
let stub: Stub;
let slowMs = 0;
/** Page requests the data service has received. */
let pagesAsked = 0;
let keysFile: string;
let gatewayConfig: string;

/** A data service that answers its health check, and pages after `slowMs`. */
beforeAll(async () => {
  stub = await startStub((req, res) => {
    res.setHeader('content-type', 'application/json');
    if (req.url?.startsWith('/internal/health')) return res.end('{"status":"ok"}');
    pagesAsked++;
    setTimeout(() => res.end(JSON.stringify({ items: [{ id: 'GB-1', country: 'GB', listing_type: 'sale', property_type: 'house' }], next_after: null })), slowMs);
  });
  const dir = makeTempDir();
  keysFile = writeKeysFile([{ id: 'ready', value, tier: 'standard', countries: ['GB'], address: '127.0.0.1', status: 'active' }], dir);
  gatewayConfig = writeGatewayConfig(DEFAULT_TIERS, dir);
});

afterAll(async () => {
  await stub?.close();
  removeTempDirs();
});

async function readyz(opsUrl: string): Promise<{ status: number; body: Record<string, unknown> } | undefined> {
  try {
    const answer = await request(`${opsUrl}/readyz`, { headersTimeout: 5000 });
    return { status: answer.statusCode, body: (await answer.body.json()) as Record<string, unknown> };
  } catch {
    return undefined; // not listening (yet, or any more)
  }
}

test('503 "starting" until the gateway serves, then 200 with Redis away (keys from the cache only)', async () => {
  const opsPort = await freePort();
  const opsUrl = `http://127.0.0.1:${opsPort}`;
  // Redis unreachable: start-up waits for it (3 s) before serving, and the ops listener is up meanwhile.
  const child = spawn(process.execPath, [path.join(ROOT, 'dist/gateway/main.js')], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH ?? '', PORT: '0', HOST: '127.0.0.1', BACKEND_URL: stub.url, KEYS_FILE: keysFile, GATEWAY_CONFIG: gatewayConfig,
      CURSOR_SECRET: cursorSecret(), OPS_PORT: String(opsPort), REDIS_URL: `redis://127.0.0.1:${await closedPort()}`, KEY_STORE: 'redis', LOG_LEVEL: 'info',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  try {
    const first = await eventually('the ops listener answers', () => readyz(opsUrl), { timeoutMs: 15_000, intervalMs: 20 });
    // The first answer comes while start-up still waits for Redis: not ready, "starting".
    expect(output).not.toMatch(/"msg":"listening"/);
    expect(first).toEqual({ status: 503, body: { ready: false, status: 'starting', checks: {} } });

    await eventually('the public listener', () => /"msg":"listening"/.test(output), { timeoutMs: 30_000 });
    const serving = await readyz(opsUrl);
    expect(serving).toEqual({
      status: 200,
      body: { ready: true, status: 'serving', checks: { keys: 'cache_only', data_services: { store_1: 'ok' }, redis: 'unavailable' }, counting: 'per_instance' },
    });
  } finally {
    child.kill('SIGTERM');
    await exited;
  }
}, 60_000);

describe('a serving gateway', () => {
  let gateway: Proc;
  let opsUrl: string;
  beforeAll(async () => {
    gateway = await startGateway({ backendUrl: stub.url, keysFile, gatewayConfig, env: { OPS_PORT: '0' } });
    opsUrl = await announcedUrl(gateway, 'ops listening');
  });
  afterAll(async () => {
    await gateway?.stop();
  });

  test('200 with every dependency ok', async () => {
    expect(await readyz(opsUrl)).toEqual({ status: 200, body: { ready: true, status: 'serving', checks: { keys: 'ok', data_services: { store_1: 'ok' } } } });
  });

  test('503 "draining" after SIGTERM while in-flight requests finish, answered until the process exits', async () => {
    slowMs = 1500;
    const asked = pagesAsked;
    const inFlight = Array.from({ length: 5 }, () => getWithKey(gateway.url, '/v1/properties?country=GB', value, { timeoutMs: 15_000 }));
    await eventually('the five requests at the data service', () => pagesAsked >= asked + 5);
    const exited = new Promise<number | null>((resolve) => gateway.child.once('exit', resolve));
    let done = false;
    void exited.then(() => (done = true));
    gateway.child.kill('SIGTERM');
    await waitForLine(gateway, '"msg":"shutting down"');
    const seen: Array<{ status: number; body: Record<string, unknown> } | undefined> = [];
    while (!done) {
      seen.push(await readyz(opsUrl));
      await sleep(50);
    }
    expect((await Promise.all(inFlight)).map((a) => a.status)).toEqual([200, 200, 200, 200, 200]);
    expect(await exited).toBe(0);
    // Every probe before the exit was answered (no refused connection while draining), and said draining.
    const answered = seen.filter((s) => s !== undefined);
    expect(answered.length).toBeGreaterThanOrEqual(3);
    const firstUnanswered = seen.findIndex((s) => s === undefined);
    if (firstUnanswered >= 0) expect(seen.slice(firstUnanswered).filter((s) => s !== undefined)).toEqual([]);
    for (const s of answered) expect(s).toEqual({ status: 503, body: { ready: false, status: 'draining', checks: {} } });
    slowMs = 0;
  }, 30_000);
});

test('200 with the data service away: the body says which one', async () => {
  const dead = `http://127.0.0.1:${await closedPort()}`;
  const gateway = await startGateway({ backendUrl: dead, keysFile, gatewayConfig, env: { OPS_PORT: '0' } });
  try {
    const opsUrl = await announcedUrl(gateway, 'ops listening');
    expect(await readyz(opsUrl)).toEqual({ status: 200, body: { ready: true, status: 'serving', checks: { keys: 'ok', data_services: { store_1: 'unavailable' } } } });
    // And it answers its callers from the catalogue.
    expect((await getWithKey(gateway.url, '/v1/properties?country=GB', value)).body).toMatchObject({ error: 'service_unavailable' });
  } finally {
    await gateway.stop();
  }
});
