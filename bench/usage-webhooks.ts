/**
 * `npx tsx bench/usage-webhooks.ts` (also `npm run bench:usage`): the hot path's CPU per request
 * with usage history and webhooks on against off, one gateway on Redis (counters in Redis, keys
 * file), /v1/ping at 10 connections. Webhooks "on" delivers to a local receiver answering 204; the
 * key's quotas are far away, so this is the steady-state cost of watching for thresholds, not of
 * sending. Then the storage cost of history (bench/usage-storage.ts).
 */
import autocannon from 'autocannon';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { stringify } from 'yaml';
import { ROOT, startProcess, type RunningProcess } from '../test/kit/processes';
import { startRedis } from '../test/kit/redis-server';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const ROUNDS = 3;
const KEY = `usage-bench-${randomBytes(8).toString('hex')}`;
const cpuSeconds = (pid: number): number => {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(f[11]) + Number(f[12])) / 100;
};

async function main(): Promise<void> {
  const dir = mkdtempSync(path.join(tmpdir(), 'usage-bench-'));
  const keys = path.join(dir, 'keys.yaml');
  const big = 1_000_000_000;
  writeFileSync(keys, stringify({ keys: [{ id: 'bench', key_sha256: createHash('sha256').update(KEY).digest('hex'), tier: 'advanced', countries: ['GB'], address: '127.0.0.1', status: 'active', limits: { per_minute: big, per_day: big, per_month: big } }] }));
  const redis = await startRedis();
  const receiver = http.createServer((req, res) => req.resume().on('end', () => res.writeHead(204).end()));
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  const receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;
  const procs: RunningProcess[] = [];
  const quiet = (p: RunningProcess): RunningProcess => {
    for (const s of [p.child.stdout!, p.child.stderr!]) { s.removeAllListeners('data'); s.resume(); }
    procs.push(p);
    return p;
  };
  try {
    const backend = quiet(await startProcess('backend-mock/main.js', { BACKEND_PORT: '0' }, 60_000));
    const variants: Array<[string, Record<string, string>]> = [
      ['history off, webhooks off', { USAGE_HISTORY: 'off' }],
      ['history on,  webhooks off', {}],
      ['history on,  webhooks on ', { WEBHOOK_URL: receiverUrl, WEBHOOK_SECRET: `whsec_${randomBytes(32).toString('base64')}` }],
    ];
    // All three run at once and are measured in alternating rounds, so the shared machine's load
    // falls on each alike; the median round is reported.
    const gateways = await Promise.all(variants.map(([, env]) => startProcess('gateway/main.js', {
      PORT: '0', KEYS_FILE: keys, GATEWAY_CONFIG: path.join(ROOT, 'config/gateway.yaml'), BACKEND_URL: backend.url,
      CURSOR_SECRET: randomBytes(32).toString('base64url'), REDIS_URL: redis.url, LOG_LEVEL: 'info', ...env,
    }).then(quiet)));
    const rounds: Array<Array<{ cpuUs: number; p50: number; p99: number; requests: number }>> = variants.map(() => []);
    for (let round = 0; round < ROUNDS; round++) {
      for (let v = 0; v < variants.length; v++) {
        const gateway = gateways[v]!;
        const opts = { url: `${gateway.url}/v1/ping`, connections: 10, headers: { 'x-api-key': KEY } };
        if (round === 0) await autocannon({ ...opts, duration: 1 });
        const before = cpuSeconds(gateway.child.pid!);
        const r = await autocannon({ ...opts, duration: SECONDS });
        const cpu = cpuSeconds(gateway.child.pid!) - before;
        if (r.non2xx) throw new Error(`${variants[v]![0]}: ${r.non2xx} answers were not 2xx`);
        rounds[v]!.push({ cpuUs: (cpu * 1e6) / r.requests.total, p50: r.latency.p50, p99: r.latency.p99, requests: r.requests.total });
      }
    }
    const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    const lines = variants.map(([name], v) => {
      const rs = rounds[v]!;
      return `${name}  ${median(rs.map((r) => r.cpuUs)).toFixed(0).padStart(4)} µs CPU/req (rounds: ${rs.map((r) => r.cpuUs.toFixed(0)).join(', ')})  p50 ${median(rs.map((r) => r.p50))} ms  p99 ${median(rs.map((r) => r.p99))} ms`;
    });
    process.stdout.write(`hot path, /v1/ping, Redis counters, c=10, ${ROUNDS} alternating rounds of ${SECONDS} s, median:\n${lines.map((l) => `  ${l}`).join('\n')}\n`);
  } finally {
    await Promise.all(procs.map((p) => p.stop()));
    receiver.close();
    await redis.stop();
  }
}

void main();
