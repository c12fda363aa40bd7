/**
 * GATEWAY_WORKERS=2 against 1 on this machine: the same gateway (Redis counters, YAML keys) driven
 * by autocannon at concurrency 50, on a first page (through the data service) and on /v1/ping (the
 * gateway's own work only: key, address, limits in Redis). Both gateways run side by side and take turns in
 * rounds (the median round of each is reported), so a slow moment of the machine does not land on
 * one only. The load generator, the data service and Redis share the machine's cores with the
 * workers: the ratio is what a second worker buys here, not on a machine of its own.
 *
 * Part of `npm run bench` (run.ts); alone: `npm run bench:workers`.
 */
import autocannon from 'autocannon';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { stringify } from 'yaml';
import { ROOT, startProcess, type RunningProcess } from '../test/kit/processes';
import { startRedis } from '../test/kit/redis-server';
import { cpuSeconds, SHIPPED_NODE_OPTIONS } from './proc-cpu';

const CONNECTIONS = 50;
const ROUNDS = 3;

export interface WorkersMeasure {
  path: string;
  workers: number;
  rps: number;
  p50: number;
  p99: number;
  /** CPU µs per request of the primary and its workers together (from /proc). */
  cpuUs: number;
  non2xx: number;
}

export interface WorkersComparison {
  one: WorkersMeasure;
  two: WorkersMeasure;
  ratio: number;
}

export interface WorkersResult {
  connections: number;
  /** The machine's 1-minute load average before and after: the other processes share its cores. */
  loadBefore: number;
  loadAfter: number;
  comparisons: WorkersComparison[];
}

const PATHS = ['/v1/properties?country=GB&limit=5', '/v1/ping'];

function keysFile(keyValue: string): string {
  const unlimited = { per_minute: 1_000_000_000, per_day: 1_000_000_000, per_month: 1_000_000_000 };
  const file = path.join(mkdtempSync(path.join(tmpdir(), 'gateway-bench-workers-')), 'keys.yaml');
  const key = { id: 'bench-workers', key_sha256: createHash('sha256').update(keyValue).digest('hex'), tier: 'advanced', countries: ['GB'], address: '127.0.0.1', status: 'active', limits: unlimited };
  writeFileSync(file, stringify({ keys: [key] }));
  return file;
}

/** Drains a process's output: a benchmark must not buffer its log lines. */
function quiet(p: RunningProcess): RunningProcess {
  for (const stream of [p.child.stdout!, p.child.stderr!]) {
    stream.removeAllListeners('data');
    stream.resume();
  }
  return p;
}

export async function runWorkers(o: { backendUrl: string; redisUrl: string; seconds: number }): Promise<WorkersResult> {
  const keyValue = `bench-workers-${randomBytes(12).toString('hex')}`;
  const keys = keysFile(keyValue);
  const start = async (workers: number): Promise<RunningProcess> =>
    quiet(
      await startProcess(
        'gateway/main.js',
        {
          PORT: '0',
          LOG_LEVEL: 'info',
          BACKEND_URL: o.backendUrl,
          KEYS_FILE: keys,
          GATEWAY_CONFIG: path.join(ROOT, 'config/gateway.yaml'),
          REDIS_URL: o.redisUrl,
          CURSOR_SECRET: randomBytes(32).toString('base64url'),
          GATEWAY_WORKERS: String(workers),
          NODE_OPTIONS: SHIPPED_NODE_OPTIONS,
        },
        60_000,
      ),
    );
  const loadBefore = loadavg()[0]!;
  const gateways = [await start(1), await start(2)];
  try {
    const headers = { 'x-api-key': keyValue };
    const median = (ms: WorkersMeasure[]): WorkersMeasure => [...ms].sort((a, b) => a.rps - b.rps)[Math.floor(ms.length / 2)]!;
    const comparisons: WorkersComparison[] = [];
    for (const path of PATHS) {
      const urls = gateways.map((g) => `${g.url}${path}`);
      for (const url of urls) await autocannon({ url, connections: CONNECTIONS, duration: 2, headers }); // warm-up
      const rounds: WorkersMeasure[][] = [[], []];
      for (let round = 0; round < ROUNDS; round++) {
        for (const [i, url] of urls.entries()) {
          const pid = gateways[i]!.child.pid!;
          const cpuBefore = cpuSeconds(pid);
          const r = await autocannon({ url, connections: CONNECTIONS, duration: o.seconds, headers });
          const cpuUs = ((cpuSeconds(pid) - cpuBefore) * 1e6) / r.requests.total;
          rounds[i]!.push({ path, workers: i + 1, rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, cpuUs, non2xx: r.non2xx });
        }
      }
      const [one, two] = [median(rounds[0]!), median(rounds[1]!)];
      comparisons.push({ one, two, ratio: two.rps / one.rps });
    }
    return { connections: CONNECTIONS, loadBefore, loadAfter: loadavg()[0]!, comparisons };
  } finally {
    await Promise.all(gateways.map((g) => g.stop()));
  }
}

export function renderWorkers(r: WorkersResult): string {
  const row = (m: WorkersMeasure): string => `| \`${m.path}\` | ${m.workers} | ${m.rps.toFixed(0)} | ${m.cpuUs.toFixed(0)} | ${m.p50} | ${m.p99} | ${m.non2xx} |`;
  return [
    `Gateway with Redis counters, c=${r.connections}, median of ${ROUNDS} alternating rounds; ` +
      `load average ${r.loadBefore.toFixed(1)} before, ${r.loadAfter.toFixed(1)} after (the load generator, data service and Redis run on the same cores):`,
    '',
    '| Path | GATEWAY_WORKERS | req/s | CPU µs/req (all processes) | p50 ms | p99 ms | non-2xx |',
    '|---|---|---|---|---|---|---|',
    ...r.comparisons.flatMap((c) => [row(c.one), row(c.two)]),
    '',
    ...r.comparisons.map((c) => `\`${c.one.path}\`: 2 workers / 1 worker ×${c.ratio.toFixed(2)}`),
    '',
  ].join('\n');
}

/** `npm run bench:workers`: this comparison alone, with its own data service and Redis. */
async function main(): Promise<void> {
  const seconds = Number(process.env.BENCH_SECONDS ?? 5);
  const backend = quiet(await startProcess('backend-mock/main.js', { BACKEND_PORT: '0', LOG_LEVEL: 'info' }, 60_000));
  const redis = await startRedis();
  try {
    process.stdout.write(renderWorkers(await runWorkers({ backendUrl: backend.url, redisUrl: redis.url, seconds })));
  } finally {
    await backend.stop();
    await redis.stop();
  }
}

if (require.main === module) {
  main().catch((err: unknown) => {
    process.stderr.write(`bench failed: ${(err as Error).stack ?? String(err)}\n`);
    process.exit(1);
  });
}
