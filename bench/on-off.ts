/**
 * What the "one feature on and off" benches share (portal.ts, hooks.ts): a key file with one
 * unlimited key, a side listener's port from its log line, gateways taking turns in 1 s rounds at
 * concurrency 10 on the same first page (median round of each: req/s, p99, gateway CPU µs per
 * request), the "on vs off" cell, the table, and the stand-alone run with its own Redis and data.
 */
import autocannon from 'autocannon';
import { createHash } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { stringify } from 'yaml';
import { ROOT, startProcess, type RunningProcess } from '../test/kit/processes';
import { startRedis } from '../test/kit/redis-server';
import { cpuSeconds, drainOutput } from './proc-cpu';

export const CONNECTIONS = 10;
const PAGE = '/v1/properties?country=GB&limit=20';

export interface TurnMedian { rps: number; p99: number; cpuUs: number }

/** A keys file with one active, unlimited `advanced` key for GB, from 127.0.0.1. */
export function benchKeysFile(id: string, keyValue: string): string {
  const unlimited = { per_minute: 1_000_000_000, per_day: 1_000_000_000, per_month: 1_000_000_000 };
  const file = path.join(mkdtempSync(path.join(tmpdir(), `gateway-${id}-`)), 'keys.yaml');
  const key = { id, key_sha256: createHash('sha256').update(keyValue).digest('hex'), tier: 'advanced', countries: ['GB'], address: '127.0.0.1', status: 'active', limits: unlimited };
  writeFileSync(file, stringify({ keys: [key] }));
  return file;
}

/** The port a side listener logs in its `message` line (it may come after the gateway's own line). */
export async function listeningPort(p: RunningProcess, message: string): Promise<number> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const line = p.output.find((l) => l.includes(`"${message}"`));
    if (line) return (JSON.parse(line) as { port: number }).port;
    if (Date.now() > deadline) throw new Error(`no "${message}" line:\n${p.output.join('\n')}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/**
 * The gateways take turns (a 2 s warm-up each, then `seconds` rounds of 1 s); the median round of
 * each. A gateway may appear more than once with other request headers (`extra`, by position: an
 * Accept-Encoding, say).
 */
export async function takeTurns(started: readonly RunningProcess[], names: readonly string[], keyValue: string, seconds: number, extra: ReadonlyArray<Record<string, string>> = []): Promise<TurnMedian[]> {
  const headersOf = (i: number): Record<string, string> => ({ 'x-api-key': keyValue, ...extra[i] });
  for (const [i, p] of started.entries()) await autocannon({ url: `${p.url}${PAGE}`, connections: CONNECTIONS, duration: 2, headers: headersOf(i) }); // warm-up
  const rounds = started.map(() => [] as TurnMedian[]);
  for (let r = 0; r < seconds; r++) {
    // The order turns each round: in a fixed order the first of a round came out dearer (curves.ts).
    for (let k = 0; k < started.length; k++) {
      const i = (r + k) % started.length;
      const p = started[i]!;
      const before = cpuSeconds(p.child.pid!);
      const result = await autocannon({ url: `${p.url}${PAGE}`, connections: CONNECTIONS, duration: 1, headers: headersOf(i) });
      if (result.non2xx > 0) throw new Error(`${names[i]}: ${result.non2xx} answers were not 2xx`);
      rounds[i]!.push({ rps: result.requests.average, p99: result.latency.p99, cpuUs: ((cpuSeconds(p.child.pid!) - before) * 1e6) / result.requests.total });
    }
  }
  const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
  return rounds.map((r) => ({ rps: median(r.map((m) => m.rps)), p99: median(r.map((m) => m.p99)), cpuUs: median(r.map((m) => m.cpuUs)) }));
}

/** The "on vs off" cell: added CPU µs per request (and %), and the req/s ratio. */
export function onVsOff(on: TurnMedian, off: TurnMedian): string {
  const d = on.cpuUs - off.cpuUs;
  return `${d >= 0 ? '+' : ''}${d.toFixed(1)} µs (${(((on.cpuUs / off.cpuUs) - 1) * 100).toFixed(0)} %), req/s ×${(on.rps / off.rps).toFixed(2)}`;
}

/** The markdown table: one row a gateway, `vs` gives the last column. */
export function onOffTable<R extends TurnMedian & { name: string }>(r: { connections: number; rounds: number; rows: R[] }, gateways: string, column: string, vs: (row: R) => string): string {
  return [
    `First page (20 listings), c=${r.connections}, the ${gateways} gateways taking turns in ${r.rounds} rounds of 1 s; median round of each.`,
    '',
    `| Gateway | req/s | p99 ms | CPU µs/req | ${column} |`,
    '|---|---|---|---|---|',
    ...r.rows.map((row) => `| ${row.name} | ${row.rps.toFixed(0)} | ${row.p99} | ${row.cpuUs.toFixed(1)} | ${vs(row)} |`),
    '',
  ].join('\n');
}

/** Runs a bench alone (its own Redis and data service) and writes bench/results/<name>.md under `title`. */
export function runAlone(name: string, title: string, bench: (options: { redisUrl: string; backendUrl: string; seconds: number }) => Promise<string>): void {
  const seconds = Number(process.env.BENCH_SECONDS ?? 5);
  (async () => {
    const redis = await startRedis();
    const backend = drainOutput(await startProcess('backend-mock/main.js', { BACKEND_PORT: '0', LOG_LEVEL: 'info' }, 60_000));
    try {
      const markdown = await bench({ redisUrl: redis.url, backendUrl: backend.url, seconds });
      writeFileSync(path.join(ROOT, `bench/results/${name}.md`), `# ${title} (${new Date().toISOString()}, ${process.version}, BENCH_SECONDS=${seconds})\n\n${markdown}`);
      process.stdout.write(`${markdown}\nwritten: bench/results/${name}.md\n`);
    } finally {
      await backend.stop();
      await redis.stop();
    }
  })().catch((err: unknown) => {
    process.stderr.write(`bench failed: ${(err as Error).stack ?? String(err)}\n`);
    process.exit(1);
  });
}
