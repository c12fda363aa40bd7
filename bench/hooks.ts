/**
 * The `/v1` path with the providers' listener on and off (issue 31: "the /v1 path costs the same
 * with the listener on"). Two gateways on the same Redis (counters and key store) and data: one
 * with `HOOKS_PORT` and Stripe on (`STRIPE_WEBHOOK_SECRET`), one without. The "on" gateway's
 * listener is checked to verify a signed event before the measure. Both take turns in 1 s rounds
 * at concurrency 10 on the same first page (20 listings); each reports its median round (req/s,
 * p99, gateway CPU µs per request from /proc).
 *
 * Part of `npm run bench` (run.ts); alone: `npm run bench:hooks` (starts its own Redis and data service).
 */
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import Redis from 'ioredis';
import Stripe from 'stripe';
import { loadGatewayConfig } from '../gateway/config/gateway-config';
import { createKeyAdmin } from '../gateway/keys/key-admin';
import { ROOT, startProcess, type RunningProcess } from '../test/kit/processes';
import { benchKeysFile, CONNECTIONS, listeningPort, onOffTable, onVsOff, runAlone, takeTurns } from './on-off';
import { drainOutput } from './proc-cpu';

const SECRET = `whsec_bench_${randomBytes(16).toString('hex')}`;

export interface HooksRow { name: string; hooks: boolean; rps: number; p99: number; cpuUs: number }
export interface HooksResult { connections: number; rounds: number; rows: HooksRow[] }

/** A gateway with `env`; with `hooks`, its providers' listener on and checked with a signed event (surfaces.ts too). */
export async function startGateway(env: Record<string, string>, hooks: boolean): Promise<RunningProcess> {
  const hooksEnv: Record<string, string> = hooks ? { HOOKS_PORT: '0', STRIPE_WEBHOOK_SECRET: SECRET } : {};
  const p = await startProcess('gateway/main.js', { PORT: '0', LOG_LEVEL: 'info', CURSOR_SECRET: randomBytes(32).toString('base64url'), GATEWAY_CONFIG: path.join(ROOT, 'config/gateway.yaml'), ...env, ...hooksEnv }, 60_000);
  if (hooks) {
    const payload = JSON.stringify({ id: `evt_bench_${randomBytes(6).toString('hex')}`, object: 'event', type: 'customer.created', created: Math.floor(Date.now() / 1000), data: { object: { id: 'cus_bench', object: 'customer' } } });
    const url = `http://127.0.0.1:${await listeningPort(p, 'hooks listening')}/hooks/stripe`;
    // A 503 is retried, as Stripe retries it (a few times within 5 s here); anything else is an error.
    let status = 0;
    for (let attempt = 0; attempt < 10 && status !== 200; attempt++) {
      if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, 500));
      status = (await fetch(url, { method: 'POST', body: payload, headers: { 'stripe-signature': Stripe.webhooks.generateTestHeaderString({ payload, secret: SECRET }) } })).status;
      if (status !== 503) break;
    }
    if (status !== 200) throw new Error(`the providers' listener answered ${status} to a signed event`);
  }
  return drainOutput(p);
}

export async function runHooks(options: { redisUrl: string; backendUrl: string; seconds: number }): Promise<HooksResult> {
  const keyValue = `bench-hooks-${randomBytes(12).toString('hex')}`;
  const redis = new Redis(options.redisUrl);
  await createKeyAdmin(redis, loadGatewayConfig(path.join(ROOT, 'config/gateway.yaml'))).import(benchKeysFile('bench-hooks', keyValue));
  redis.disconnect();
  const onRedis = { BACKEND_URL: options.backendUrl, REDIS_URL: options.redisUrl, KEY_STORE: 'redis' };
  const specs: Array<[string, boolean]> = [['Redis counters + key store, providers\' listener off', false], ['Redis counters + key store, providers\' listener and Stripe on', true]];
  const started: RunningProcess[] = [];
  try {
    for (const [, hooks] of specs) started.push(await startGateway(onRedis, hooks));
    const medians = await takeTurns(started, specs.map(([name]) => name), keyValue, options.seconds);
    const rows = specs.map(([name, hooks], i) => ({ name, hooks, ...medians[i]! }));
    return { connections: CONNECTIONS, rounds: options.seconds, rows };
  } finally {
    await Promise.all(started.map((p) => p.stop()));
  }
}

export function renderHooks(r: HooksResult): string {
  const base = r.rows.find((row) => !row.hooks)!;
  return onOffTable(r, 'two', 'listener on vs off', (row) => (row.hooks ? onVsOff(row, base) : '—'));
}

if (require.main === module) {
  runAlone('hooks', "/v1 with the providers' listener on and off", async (options) => renderHooks(await runHooks(options)));
}
