/**
 * `npx tsx bench/compression-cost.ts` (after `npm run build`): what compressing dynamic answers
 * costs the other callers of a gateway. One gateway (memory counters, a YAML keys file with two
 * keys), its data service, and:
 *   1. in-process: the gateway's ~39 KB page (`limit=100`) and its default 8 KB page (`limit=20`)
 *      compressed at the levels of each coding (least CPU µs of the rounds, bytes);
 *   2. end to end: one caller fetching that page at c=10 with `Accept-Encoding: identity`, `gzip`,
 *      `br` (and `zstd` where the runtime has it), each at the level the gateway uses, and a browser's
 *      `gzip, deflate, br, zstd` (the gateway's order of preference decides), while another
 *      caller (its own key) sends `/v1/ping` one after the other: the pinger's p50 and p99, the
 *      gateway's CPU µs per page (from /proc), and pages per second. A round with no page load gives
 *      the pinger's own p50. The variants take turns, round after round, so the machine's slow
 *      moments fall on all of them; medians of the rounds are reported, and the least CPU and best
 *      pages/s (on a shared machine other work only adds to a round).
 * BENCH_SECONDS (default 4) per round, BENCH_ROUNDS (default 3). BENCH_ROOT runs another checkout's
 * build (the code before a change) with the same load.
 */
import autocannon from 'autocannon';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { stringify } from 'yaml';
import { compressSync, DYNAMIC_LEVELS, OFFERED } from '../gateway/compression/codecs';
import type { ContentCoding } from '../gateway/compression/negotiate';
import { ROOT, startNodeScript, startProcess, type RunningProcess } from '../test/kit/processes';
import { cpuSeconds, ownCpuMicros as cpuMicros } from './proc-cpu';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 4);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const GATEWAY_ROOT = path.resolve(process.env.BENCH_ROOT ?? ROOT);
const PAGE_KEY = `cost-page-${randomBytes(12).toString('hex')}`;
const PING_KEY = `cost-ping-${randomBytes(12).toString('hex')}`;
const PAGE_QUERY = 'country=GB&limit=100';
const BROWSER = 'gzip, deflate, br, zstd';

const median = (xs: readonly number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const quantile = (xs: readonly number[], q: number): number => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * q))]!;

/** 1. Each level, in turns; the least CPU µs per page of the rounds (other work only adds to a round). */
function measureLevels(page: Buffer): Array<{ coding: ContentCoding; level: number; bytes: number; cpuUs: number; used: boolean }> {
  const levels: Record<ContentCoding, number[]> = { gzip: [1, 3, 6], br: [1, 2, 3, 4, 5], zstd: [1, 3] };
  const variants = OFFERED.flatMap((coding) => levels[coding].map((level) => ({ coding, level, bytes: compressSync(coding, page, level).length, samples: [] as number[] })));
  for (let r = 0; r < 21; r++) {
    for (const v of variants) {
      const started = cpuMicros();
      for (let i = 0; i < 50; i++) compressSync(v.coding, page, v.level);
      if (r > 0) v.samples.push((cpuMicros() - started) / 50);
    }
  }
  return variants.map((v) => ({ coding: v.coding, level: v.level, bytes: v.bytes, cpuUs: Math.min(...v.samples), used: DYNAMIC_LEVELS[v.coding] === v.level }));
}

/** Sequential `/v1/ping`s on one kept-alive connection until `stop()`: their latencies in ms. */
function pinger(url: string): { stop(): Promise<number[]> } {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const times: number[] = [];
  let running = true;
  const one = (): Promise<void> => new Promise((resolve, reject) => {
    const started = performance.now();
    http.get(`${url}/v1/ping`, { agent, headers: { 'x-api-key': PING_KEY } }, (res) => {
      res.resume();
      res.on('end', () => {
        if (res.statusCode !== 200) reject(new Error(`ping answered ${res.statusCode}`));
        times.push(performance.now() - started);
        resolve();
      });
    }).on('error', reject);
  });
  const loop = (async () => {
    while (running) await one();
  })();
  return {
    async stop() {
      running = false;
      await loop;
      agent.destroy();
      return times;
    },
  };
}

/** The bytes of an answer as sent (fetch would decode them), checking the coding asked is the one used. */
function wireBytes(url: string, coding: string): Promise<number> {
  return new Promise((resolve, reject) => {
    http.get(url, { headers: { 'x-api-key': PAGE_KEY, 'accept-encoding': coding } }, (res) => {
      let n = 0;
      res.on('data', (c: Buffer) => (n += c.length));
      const used = res.headers['content-encoding'] ?? 'identity';
      res.on('end', () => (used === coding || (coding === BROWSER && used !== 'identity') ? resolve(n) : reject(new Error(`asked ${coding}, got ${used}`))));
    }).on('error', reject);
  });
}

interface Row { name: string; used?: string; pingP50: number[]; pingP99: number[]; cpuUsPerPage: number[]; pagesPerSecond: number[]; bytesPerPage?: number }

async function round(gateway: RunningProcess, row: Row, coding: string | undefined): Promise<void> {
  const ping = pinger(gateway.url);
  if (coding === undefined) {
    await new Promise((resolve) => setTimeout(resolve, SECONDS * 1000));
  } else {
    const before = cpuSeconds(gateway.child.pid!);
    const result = await autocannon({ url: `${gateway.url}/v1/properties?${PAGE_QUERY}`, connections: 10, duration: SECONDS, headers: { 'x-api-key': PAGE_KEY, 'accept-encoding': coding } });
    if (result.non2xx) throw new Error(`${result.non2xx} page answers were not 2xx`);
    row.cpuUsPerPage.push(((cpuSeconds(gateway.child.pid!) - before) * 1e6) / result.requests.total);
    row.pagesPerSecond.push(result.requests.total / SECONDS);
  }
  const times = await ping.stop();
  row.pingP50.push(quantile(times, 0.5));
  row.pingP99.push(quantile(times, 0.99));
}

async function main(): Promise<void> {
  const tmp = mkdtempSync(path.join(tmpdir(), 'gateway-compression-cost-'));
  const keysFile = path.join(tmp, 'keys.yaml');
  const unlimited = { per_minute: 1_000_000_000, per_day: 1_000_000_000, per_month: 1_000_000_000 };
  const key = (id: string, value: string) => ({ id, key_sha256: createHash('sha256').update(value).digest('hex'), tier: 'advanced', countries: ['GB'], address: '127.0.0.1', status: 'active', limits: unlimited });
  writeFileSync(keysFile, stringify({ keys: [key('page', PAGE_KEY), key('ping', PING_KEY)] }));
  const quiet = (p: RunningProcess): RunningProcess => {
    for (const stream of [p.child.stdout!, p.child.stderr!]) {
      stream.removeAllListeners('data');
      stream.resume();
    }
    return p;
  };
  const backend = quiet(await startProcess('backend-mock/main.js', { BACKEND_PORT: '0', LOG_LEVEL: 'info' }, 60_000));
  const env = { PORT: '0', LOG_LEVEL: 'info', CURSOR_SECRET: randomBytes(32).toString('base64url'), GATEWAY_CONFIG: path.join(ROOT, 'config/gateway.yaml'), KEYS_FILE: keysFile, BACKEND_URL: backend.url };
  const gateway = quiet(GATEWAY_ROOT === ROOT ? await startProcess('gateway/main.js', env, 60_000) : await startNodeScript(path.join(GATEWAY_ROOT, 'dist/gateway/main.js'), env, 60_000));
  try {
    const pageUrl = `${gateway.url}/v1/properties?${PAGE_QUERY}`;
    const page = Buffer.from(await (await fetch(pageUrl, { headers: { 'x-api-key': PAGE_KEY, 'accept-encoding': 'identity' } })).arrayBuffer());
    const small = Buffer.from(await (await fetch(`${gateway.url}/v1/properties?country=GB&limit=20`, { headers: { 'x-api-key': PAGE_KEY, 'accept-encoding': 'identity' } })).arrayBuffer());
    const levels = measureLevels(page);
    const smallLevels = measureLevels(small);
    // The last: a browser's header, every coding weighed alike, where the server's order decides.
    const codings = ['identity', ...OFFERED, BROWSER];
    const rows: Row[] = [{ name: 'no page load', pingP50: [], pingP99: [], cpuUsPerPage: [], pagesPerSecond: [] }, ...codings.map((c) => ({ name: c, pingP50: [], pingP99: [], cpuUsPerPage: [], pagesPerSecond: [] }))];
    for (const coding of codings) rows.find((r) => r.name === coding)!.bytesPerPage = await wireBytes(pageUrl, coding);
    rows.find((r) => r.name === BROWSER)!.used = (await fetch(pageUrl, { headers: { 'x-api-key': PAGE_KEY, 'accept-encoding': BROWSER } })).headers.get('content-encoding') ?? 'identity';
    // Warm-up, then the rounds, the variants taking turns.
    await autocannon({ url: pageUrl, connections: 10, duration: 2, headers: { 'x-api-key': PAGE_KEY } });
    for (let r = 0; r < ROUNDS; r++) for (const row of rows) await round(gateway, row, row.name === 'no page load' ? undefined : row.name);
    const f = (n: number, d = 1): string => n.toFixed(d);
    const out = [
      `# Compression cost to other callers (${new Date().toISOString()}, ${process.version}, ${GATEWAY_ROOT === ROOT ? 'this build' : GATEWAY_ROOT}, BENCH_SECONDS=${SECONDS}, BENCH_ROUNDS=${ROUNDS}, load average ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')})`,
      '',
      `## In-process, the ${page.length}-byte page (least CPU of 20 rounds of 50; ✓ the level the gateway uses)`,
      '',
      '| Coding | Level | Bytes | CPU µs/page | |',
      '|---|---|---|---|---|',
      ...levels.map((l) => `| ${l.coding} | ${l.level} | ${l.bytes} | ${f(l.cpuUs)} | ${l.used ? '✓' : ''} |`),
      '',
      `## In-process, the default page (limit=20, ${small.length} bytes)`,
      '',
      '| Coding | Level | Bytes | CPU µs/page | |',
      '|---|---|---|---|---|',
      ...smallLevels.map((l) => `| ${l.coding} | ${l.level} | ${l.bytes} | ${f(l.cpuUs)} | ${l.used ? '✓' : ''} |`),
      '',
      '## End to end: one caller at c=10 on the page, another sending /v1/ping one after the other (medians of the rounds)',
      '',
      '| Page load | Bytes/page | Pages/s (median; best) | Gateway CPU µs/page (median; least) | Ping p50 ms | Ping p99 ms |',
      '|---|---|---|---|---|---|',
      ...rows.map((r) => `| ${r.name}${r.used ? ` (answered ${r.used})` : ''} | ${r.bytesPerPage ?? '—'} | ${r.pagesPerSecond.length ? `${f(median(r.pagesPerSecond), 0)}; ${f(Math.max(...r.pagesPerSecond), 0)}` : '—'} | ${r.cpuUsPerPage.length ? `${f(median(r.cpuUsPerPage), 0)}; ${f(Math.min(...r.cpuUsPerPage), 0)}` : '—'} | ${f(median(r.pingP50), 2)} | ${f(median(r.pingP99), 2)} |`),
      '',
    ].join('\n');
    process.stdout.write(out);
    writeFileSync(path.join(ROOT, 'bench/results/compression-cost.md'), out);
  } finally {
    await gateway.stop();
    await backend.stop();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`bench failed: ${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
