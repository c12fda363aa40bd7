/**
 * The `/v1` path with the key holders' portal on and off (issue 24: "the /v1 path costs the same
 * with the portal on"). Pairs of gateways on the same data, one with `PORTAL_PORT` and
 * `PORTAL_PUBLIC_URL` set and one without: embedded (memory counters, YAML keys) and on Redis
 * (counters and key store in one Redis). The portal of each "on" gateway is checked to answer
 * before the measure. All four take turns in 1 s rounds at concurrency 10 on the same first page
 * (20 listings); each reports its median round (req/s, p99, and gateway CPU µs per request from
 * /proc), so a slow moment of the shared machine does not land on one only.
 *
 * Part of `npm run bench` (run.ts); alone: `npm run bench:portal` (starts its own Redis and data service).
 */
import autocannon from 'autocannon';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Redis from 'ioredis';
import { stringify } from 'yaml';
import { loadGatewayConfig } from '../gateway/config/gateway-config';
import { createKeyAdmin } from '../gateway/keys/key-admin';
import { ROOT, startProcess, type RunningProcess } from '../test/kit/processes';
import { startRedis } from '../test/kit/redis-server';

const CONNECTIONS = 10;
const PAGE = '/v1/properties?country=GB&limit=20';

export interface PortalRow { name: string; portal: boolean; rps: number; p99: number; cpuUs: number }
export interface PortalResult { connections: number; rounds: number; rows: PortalRow[] }

function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

function keysFile(keyValue: string): string {
  const unlimited = { per_minute: 1_000_000_000, per_day: 1_000_000_000, per_month: 1_000_000_000 };
  const file = path.join(mkdtempSync(path.join(tmpdir(), 'gateway-bench-portal-')), 'keys.yaml');
  const key = { id: 'bench-portal', key_sha256: createHash('sha256').update(keyValue).digest('hex'), tier: 'advanced', countries: ['GB'], address: '127.0.0.1', status: 'active', limits: unlimited };
  writeFileSync(file, stringify({ keys: [key] }));
  return file;
}

/** The portal's port from its "portal listening" line (it may come after the gateway's own line). */
async function portalPort(p: RunningProcess): Promise<number> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    for (const line of p.output) {
      if (!line.includes('"portal listening"')) continue;
      return (JSON.parse(line) as { port: number }).port;
    }
    if (Date.now() > deadline) throw new Error(`no "portal listening" line:\n${p.output.join('\n')}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function startGateway(env: Record<string, string>, portal: boolean): Promise<RunningProcess> {
  const portalEnv: Record<string, string> = portal ? { PORTAL_PORT: '0', PORTAL_PUBLIC_URL: 'http://127.0.0.1:8083' } : {};
  const p = await startProcess('gateway/main.js', { PORT: '0', LOG_LEVEL: 'info', CURSOR_SECRET: randomBytes(32).toString('base64url'), GATEWAY_CONFIG: path.join(ROOT, 'config/gateway.yaml'), ...env, ...portalEnv }, 60_000);
  if (portal) {
    const port = await portalPort(p);
    const answer = await fetch(`http://127.0.0.1:${port}/portal/sign-in`, { redirect: 'manual' });
    if (answer.status !== 200) throw new Error(`the portal answered ${answer.status} on /portal/sign-in`);
  }
  for (const stream of [p.child.stdout!, p.child.stderr!]) {
    stream.removeAllListeners('data');
    stream.resume(); // a benchmark must not buffer its log lines
  }
  return p;
}

export async function runPortal(options: { redisUrl: string; backendUrl: string; seconds: number }): Promise<PortalResult> {
  const keyValue = `bench-portal-${randomBytes(12).toString('hex')}`;
  const keys = keysFile(keyValue);
  const redis = new Redis(options.redisUrl);
  await createKeyAdmin(redis, loadGatewayConfig(path.join(ROOT, 'config/gateway.yaml'))).import(keys);
  redis.disconnect();
  const embedded = { BACKEND_URL: options.backendUrl, KEYS_FILE: keys };
  const onRedis = { ...embedded, REDIS_URL: options.redisUrl, KEY_STORE: 'redis' };
  const specs: Array<[string, Record<string, string>, boolean]> = [
    ['embedded, portal off', embedded, false],
    ['embedded, portal on', embedded, true],
    ['Redis counters + key store, portal off', onRedis, false],
    ['Redis counters + key store, portal on', onRedis, true],
  ];
  const started: RunningProcess[] = [];
  try {
    for (const [, env, portal] of specs) started.push(await startGateway(env, portal));
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
    const rows = specs.map(([name, , portal], i) => ({ name, portal, rps: median(rounds[i]!.map((m) => m.rps)), p99: median(rounds[i]!.map((m) => m.p99)), cpuUs: median(rounds[i]!.map((m) => m.cpuUs)) }));
    return { connections: CONNECTIONS, rounds: options.seconds, rows };
  } finally {
    await Promise.all(started.map((p) => p.stop()));
  }
}

export function renderPortal(r: PortalResult): string {
  const off = (row: PortalRow): PortalRow => r.rows.find((o) => !o.portal && row.name.startsWith(o.name.split(', portal')[0]!))!;
  const vs = (row: PortalRow): string => {
    if (!row.portal) return '—';
    const base = off(row);
    const d = row.cpuUs - base.cpuUs;
    return `${d >= 0 ? '+' : ''}${d.toFixed(1)} µs (${(((row.cpuUs / base.cpuUs) - 1) * 100).toFixed(0)} %), req/s ×${(row.rps / base.rps).toFixed(2)}`;
  };
  return [
    `First page (20 listings), c=${r.connections}, the four gateways taking turns in ${r.rounds} rounds of 1 s; median round of each.`,
    '',
    '| Gateway | req/s | p99 ms | CPU µs/req | portal on vs off |',
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
      const result = await runPortal({ redisUrl: redis.url, backendUrl: backend.url, seconds });
      const markdown = renderPortal(result);
      writeFileSync(path.join(ROOT, 'bench/results/portal.md'), `# /v1 with the portal on and off (${new Date().toISOString()}, ${process.version}, BENCH_SECONDS=${seconds})\n\n${markdown}`);
      process.stdout.write(`${markdown}\nwritten: bench/results/portal.md\n`);
    } finally {
      await backend.stop();
      await redis.stop();
    }
  })().catch((err: unknown) => {
    process.stderr.write(`bench failed: ${(err as Error).stack ?? String(err)}\n`);
    process.exit(1);
  });
}
