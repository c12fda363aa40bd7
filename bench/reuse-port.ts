/**
 * `npm run bench:reuse-port`: two ways to run the gateway on two cores, side by side on this
 * machine, against one process:
 *
 *   - the cluster module's distribution (GATEWAY_WORKERS=2, as shipped: the primary accepts each
 *     connection and hands it to a worker in turn);
 *   - two independent gateway processes (GATEWAY_WORKERS=1) each listening on the same port with
 *     Node's `server.listen({ reusePort: true })` (SO_REUSEPORT: the kernel spreads connections by
 *     a hash of their addresses). The gateway's code is not changed: bench/reuse-port-preload.js,
 *     loaded with `--require`, adds `reusePort: true` to the public listener's bind.
 *
 * Redis counters, YAML keys (as bench/workers.ts), c=50 on a first page (through the data service)
 * and on /v1/ping (the gateway's own work). The three take turns in rounds of 2 s, the order turning
 * each round; the median round of each: req/s, CPU µs per request of all its processes (from /proc),
 * p99, and how the CPU split between the two serving processes (the balance of the distribution).
 * Writes bench/results/reuse-port.{md,json}.
 */
import autocannon from 'autocannon';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import net from 'node:net';
import { loadavg } from 'node:os';
import path from 'node:path';
import { ROOT, startProcess, type RunningProcess } from '../test/kit/processes';
import { benchKeysFile, runAlone } from './on-off';
import { cpuSeconds, drainOutput, SHIPPED_NODE_OPTIONS } from './proc-cpu';

const CONNECTIONS = 50;
const ROUND_SECONDS = 2;
const PATHS = ['/v1/properties?country=GB&limit=20', '/v1/ping'];

interface Way { name: string; url: string; processes: RunningProcess[] }
export interface ReusePortRow { path: string; name: string; rps: number; cpuUs: number; p99: number; split: string }
export interface ReusePortResult { date: string; node: string; rounds: number; loadBefore: number; loadAfter: number; rows: ReusePortRow[] }

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** The processes that serve: the workers of a primary (its children), else the processes themselves. */
function servingPids(way: Way): number[] {
  return way.processes.flatMap((p) => {
    const pid = p.child.pid!;
    try {
      const children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').split(' ').filter(Boolean).map(Number);
      return children.length > 0 ? children : [pid];
    } catch {
      return [pid];
    }
  });
}

const ownCpu = (pid: number): number => {
  try {
    const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(f[11]) + Number(f[12])) / 100;
  } catch {
    return 0;
  }
};

async function round(way: Way, urlPath: string, headers: Record<string, string>): Promise<Omit<ReusePortRow, 'path' | 'name'>> {
  const pids = way.processes.map((p) => p.child.pid!);
  const serving = servingPids(way);
  const before = pids.map(cpuSeconds);
  const servingBefore = serving.map(ownCpu);
  const r = await autocannon({ url: `${way.url}${urlPath}`, connections: CONNECTIONS, duration: ROUND_SECONDS, headers });
  if (r.non2xx > 0 || r.errors > 0) throw new Error(`${way.name} ${urlPath}: ${r.non2xx} non-2xx, ${r.errors} errors`);
  const cpu = pids.reduce((sum, pid, i) => sum + cpuSeconds(pid) - before[i]!, 0);
  const shares = serving.map((pid, i) => ownCpu(pid) - servingBefore[i]!);
  const total = shares.reduce((a, b) => a + b, 0) || 1;
  return { rps: r.requests.total / ROUND_SECONDS, cpuUs: (cpu * 1e6) / r.requests.total, p99: r.latency.p99, split: shares.map((s) => `${Math.round((s / total) * 100)} %`).join(' / ') };
}

export async function runReusePort(o: { backendUrl: string; redisUrl: string; rounds: number }): Promise<ReusePortResult> {
  const keyValue = `bench-reuse-${randomBytes(12).toString('hex')}`;
  const base = {
    LOG_LEVEL: 'info', BACKEND_URL: o.backendUrl, KEYS_FILE: benchKeysFile('bench-reuse', keyValue), GATEWAY_CONFIG: path.join(ROOT, 'config/gateway.yaml'),
    REDIS_URL: o.redisUrl, CURSOR_SECRET: randomBytes(32).toString('base64url'), NODE_OPTIONS: SHIPPED_NODE_OPTIONS,
  };
  const started: RunningProcess[] = [];
  const start = async (env: Record<string, string>): Promise<RunningProcess> => {
    const p = drainOutput(await startProcess('gateway/main.js', { ...base, ...env }, 60_000));
    started.push(p);
    return p;
  };
  const loadBefore = loadavg()[0]!;
  try {
    const one = await start({ PORT: '0', GATEWAY_WORKERS: '1' });
    const cluster = await start({ PORT: '0', GATEWAY_WORKERS: '2' });
    const port = await freePort();
    const preload = { PORT: String(port), GATEWAY_WORKERS: '1', BENCH_REUSE_PORT: String(port), NODE_OPTIONS: `${SHIPPED_NODE_OPTIONS} --require ${path.join(ROOT, 'bench/reuse-port-preload.js')}` };
    const reuse = [await start(preload), await start(preload)];
    const ways: Way[] = [
      { name: 'one process (GATEWAY_WORKERS=1)', url: one.url, processes: [one] },
      { name: 'cluster, GATEWAY_WORKERS=2 (primary hands connections round-robin)', url: cluster.url, processes: [cluster] },
      { name: 'two processes, reusePort on one port (kernel spreads connections)', url: `http://127.0.0.1:${port}`, processes: reuse },
    ];
    const headers = { 'x-api-key': keyValue };
    const rows: ReusePortRow[] = [];
    const median = <T>(v: T[], by: (t: T) => number): T => [...v].sort((a, b) => by(a) - by(b))[Math.floor(v.length / 2)]!;
    for (const urlPath of PATHS) {
      for (const way of ways) await autocannon({ url: `${way.url}${urlPath}`, connections: CONNECTIONS, duration: ROUND_SECONDS, headers }); // warm-up
      const seen = ways.map((): Array<Omit<ReusePortRow, 'path' | 'name'>> => []);
      for (let r = 0; r < o.rounds; r++) {
        for (let k = 0; k < ways.length; k++) {
          const i = (r + k) % ways.length;
          seen[i]!.push(await round(ways[i]!, urlPath, headers));
        }
      }
      for (const [i, way] of ways.entries()) {
        const m = { rps: median(seen[i]!, (s) => s.rps).rps, cpuUs: median(seen[i]!, (s) => s.cpuUs).cpuUs, p99: median(seen[i]!, (s) => s.p99).p99, split: median(seen[i]!, (s) => s.rps).split };
        rows.push({ path: urlPath, name: way.name, ...m });
        process.stdout.write(`  ${urlPath} ${way.name}: ${m.rps.toFixed(0)} req/s, ${m.cpuUs.toFixed(0)} µs CPU/req, p99 ${m.p99} ms, split ${m.split}\n`);
      }
    }
    return { date: new Date().toISOString(), node: process.version, rounds: o.rounds, loadBefore, loadAfter: loadavg()[0]!, rows };
  } finally {
    await Promise.all(started.map((p) => p.stop()));
  }
}

export function renderReusePort(r: ReusePortResult): string {
  const lines = [
    `${r.date}, ${r.node}: Redis counters, YAML keys, c=${CONNECTIONS}; ${r.rounds} rounds of ${ROUND_SECONDS} s, the three taking turns (order turning), median round of each; load average ${r.loadBefore.toFixed(1)} before, ${r.loadAfter.toFixed(1)} after (the load generator, data service and Redis share the two cores).`,
    '',
    '| Path | Way | req/s | × one process | CPU µs/req (all its processes) | p99 ms | CPU split between the serving processes |',
    '|---|---|---|---|---|---|---|',
  ];
  for (const urlPath of PATHS) {
    const rows = r.rows.filter((x) => x.path === urlPath);
    const one = rows[0]!;
    lines.push(...rows.map((x) => `| \`${x.path}\` | ${x.name} | ${x.rps.toFixed(0)} | ${(x.rps / one.rps).toFixed(2)} | ${x.cpuUs.toFixed(0)} | ${x.p99} | ${x === one ? '—' : x.split} |`));
  }
  lines.push('');
  for (const urlPath of PATHS) {
    const [, cluster, reuse] = r.rows.filter((x) => x.path === urlPath);
    lines.push(`\`${urlPath}\`: reusePort / cluster: req/s ×${(reuse!.rps / cluster!.rps).toFixed(2)}, CPU per request ×${(reuse!.cpuUs / cluster!.cpuUs).toFixed(2)}`);
  }
  return `${lines.join('\n')}\n`;
}

/** `npm run bench:reuse-port`: this comparison alone, through the benches' one stand-alone runner. */
if (require.main === module) {
  runAlone('reuse-port', 'reusePort against the cluster module (bench/reuse-port.ts)', async ({ redisUrl, backendUrl, seconds }) => renderReusePort(await runReusePort({ backendUrl, redisUrl, rounds: seconds })));
}
