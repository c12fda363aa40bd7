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
import autocannon from 'autocannon';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Redis from 'ioredis';
import Stripe from 'stripe';
import { stringify } from 'yaml';
import { loadGatewayConfig } from '../gateway/config/gateway-config';
import { createKeyAdmin } from '../gateway/keys/key-admin';
import { ROOT, startProcess, type RunningProcess } from '../test/kit/processes';
import { startRedis } from '../test/kit/redis-server';

const CONNECTIONS = 10;
const PAGE = '/v1/properties?country=GB&limit=20';
const SECRET = `whsec_bench_${randomBytes(16).toString('hex')}`;

export interface HooksRow { name: string; hooks: boolean; rps: number; p99: number; cpuUs: number }
export interface HooksResult { connections: number; rounds: number; rows: HooksRow[] }

function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

function keysFile(keyValue: string): string {
  const unlimited = { per_minute: 1_000_000_000, per_day: 1_000_000_000, per_month: 1_000_000_000 };
  const file = path.join(mkdtempSync(path.join(tmpdir(), 'gateway-bench-hooks-')), 'keys.yaml');
  const key = { id: 'bench-hooks', key_sha256: createHash('sha256').update(keyValue).digest('hex'), tier: 'advanced', countries: ['GB'], address: '127.0.0.1', status: 'active', limits: unlimited };
  writeFileSync(file, stringify({ keys: [key] }));
  return file;
}

/** The listener's port from its "hooks listening" line. */
async function hooksPort(p: RunningProcess): Promise<number> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const line = p.output.find((l) => l.includes('"hooks listening"'));
    if (line) return (JSON.parse(line) as { port: number }).port;
    if (Date.now() > deadline) throw new Error(`no "hooks listening" line:\n${p.output.join('\n')}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function startGateway(env: Record<string, string>, hooks: boolean): Promise<RunningProcess> {
  const hooksEnv: Record<string, string> = hooks ? { HOOKS_PORT: '0', STRIPE_WEBHOOK_SECRET: SECRET } : {};
  const p = await startProcess('gateway/main.js', { PORT: '0', LOG_LEVEL: 'info', CURSOR_SECRET: randomBytes(32).toString('base64url'), GATEWAY_CONFIG: path.join(ROOT, 'config/gateway.yaml'), ...env, ...hooksEnv }, 60_000);
  if (hooks) {
    const payload = JSON.stringify({ id: `evt_bench_${randomBytes(6).toString('hex')}`, object: 'event', type: 'customer.created', created: Math.floor(Date.now() / 1000), data: { object: { id: 'cus_bench', object: 'customer' } } });
    const answer = await fetch(`http://127.0.0.1:${await hooksPort(p)}/hooks/stripe`, {
      method: 'POST', body: payload, headers: { 'stripe-signature': Stripe.webhooks.generateTestHeaderString({ payload, secret: SECRET }) },
    });
    if (answer.status !== 200) throw new Error(`the providers' listener answered ${answer.status} to a signed event`);
  }
  for (const stream of [p.child.stdout!, p.child.stderr!]) {
    stream.removeAllListeners('data');
    stream.resume(); // a benchmark must not buffer its log lines
  }
  return p;
}

export async function runHooks(options: { redisUrl: string; backendUrl: string; seconds: number }): Promise<HooksResult> {
  const keyValue = `bench-hooks-${randomBytes(12).toString('hex')}`;
  const redis = new Redis(options.redisUrl);
  await createKeyAdmin(redis, loadGatewayConfig(path.join(ROOT, 'config/gateway.yaml'))).import(keysFile(keyValue));
  redis.disconnect();
  const onRedis = { BACKEND_URL: options.backendUrl, REDIS_URL: options.redisUrl, KEY_STORE: 'redis' };
  const specs: Array<[string, boolean]> = [['Redis counters + key store, providers\' listener off', false], ['Redis counters + key store, providers\' listener and Stripe on', true]];
  const started: RunningProcess[] = [];
  try {
    for (const [, hooks] of specs) started.push(await startGateway(onRedis, hooks));
    const headers = { 'x-api-key': keyValue };
    for (const p of started) await autocannon({ url: `${p.url}${PAGE}`, connections: CONNECTIONS, duration: 2, headers }); // warm-up
    const rounds = specs.map(() => [] as Array<{ rps: number; p99: number; cpuUs: number }>);
    for (let r = 0; r < options.seconds; r++) {
      for (const [i, p] of started.entries()) {
        const before = cpuSeconds(p.child.pid!);
        const result = await autocannon({ url: `${p.url}${PAGE}`, connections: CONNECTIONS, duration: 1, headers });
        if (result.non2xx > 0) throw new Error(`${specs[i]![0]}: ${result.non2xx} answers were not 2xx`);
        rounds[i]!.push({ rps: result.requests.average, p99: result.latency.p99, cpuUs: ((cpuSeconds(p.child.pid!) - before) * 1e6) / result.requests.total });
      }
    }
    const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
    const rows = specs.map(([name, hooks], i) => ({ name, hooks, rps: median(rounds[i]!.map((m) => m.rps)), p99: median(rounds[i]!.map((m) => m.p99)), cpuUs: median(rounds[i]!.map((m) => m.cpuUs)) }));
    return { connections: CONNECTIONS, rounds: options.seconds, rows };
  } finally {
    await Promise.all(started.map((p) => p.stop()));
  }
}

export function renderHooks(r: HooksResult): string {
  const base = r.rows.find((row) => !row.hooks)!;
  const vs = (row: HooksRow): string => {
    if (!row.hooks) return '—';
    const d = row.cpuUs - base.cpuUs;
    return `${d >= 0 ? '+' : ''}${d.toFixed(1)} µs (${(((row.cpuUs / base.cpuUs) - 1) * 100).toFixed(0)} %), req/s ×${(row.rps / base.rps).toFixed(2)}`;
  };
  return [
    `First page (20 listings), c=${r.connections}, the two gateways taking turns in ${r.rounds} rounds of 1 s; median round of each.`,
    '',
    '| Gateway | req/s | p99 ms | CPU µs/req | listener on vs off |',
    '|---|---|---|---|---|',
    ...r.rows.map((row) => `| ${row.name} | ${row.rps.toFixed(0)} | ${row.p99} | ${row.cpuUs.toFixed(1)} | ${vs(row)} |`),
    '',
  ].join('\n');
}

if (require.main === module) {
  const seconds = Number(process.env.BENCH_SECONDS ?? 5);
  (async () => {
    const redis = await startRedis();
    const backend = await startProcess('backend-mock/main.js', { BACKEND_PORT: '0', LOG_LEVEL: 'info' }, 60_000);
    for (const stream of [backend.child.stdout!, backend.child.stderr!]) {
      stream.removeAllListeners('data');
      stream.resume();
    }
    try {
      const result = await runHooks({ redisUrl: redis.url, backendUrl: backend.url, seconds });
      const markdown = renderHooks(result);
      writeFileSync(path.join(ROOT, 'bench/results/hooks.md'), `# /v1 with the providers' listener on and off (${new Date().toISOString()}, ${process.version}, BENCH_SECONDS=${seconds})\n\n${markdown}`);
      process.stdout.write(`${markdown}\nwritten: bench/results/hooks.md\n`);
    } finally {
      await backend.stop();
      await redis.stop();
    }
  })().catch((err: unknown) => {
    process.stderr.write(`bench failed: ${(err as Error).stack ?? String(err)}\n`);
    process.exit(1);
  });
}
