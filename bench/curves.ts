/**
 * `npm run bench:curves` (also part of `npm run bench`): how the gateway's cost grows with the work,
 * each point measured against the bare node:http proxy (the baseline) in the same rounds, because
 * the 2-core machine is shared and absolute figures drift by 2× within minutes:
 *
 *   - concurrency 1 → 200: CPU µs per request and p99 (autocannon, whole ms), gateway on Redis
 *     (counters and key store), page 2 of a walk (a cursor in, a cursor out), 7.9 KB;
 *   - addresses per key 1 → 16: one gateway, five keys bound to 1, 2, 4, 8 and 16 entries (CIDR
 *     ranges, IPv4 and IPv6, the caller's address last), c=10, the keys taking turns;
 *   - keys in Redis 1,000 → 100,000 → 1,000,000 (CURVE_KEYS to choose): a redis-server and a gateway
 *     per size, taking turns; requests spread over 1,000 of the keys, c=10; start-up time and RSS;
 *   - keys in the keys file 1,000 → 200,000 (CURVE_KEYS_FILE to choose; keys-file-curve.ts): start-up
 *     time, RSS idle and under load, CPU per request, the sizes taking turns;
 *   - memory: the gateway under load at c=50 with V8's default young generation and with
 *     `--max-semi-space-size` 8, 4 and 2 (MB), side by side: RSS and CPU per request (CURVES=memory-embedded:
 *     the same for the embedded gateway, keys file and memory counters);
 *   - idle keep-alive connections 0 → 100 → 1,000 → 10,000 (CURVE_IDLE to choose): a fresh gateway
 *     per point, warmed, then that many sockets each make one request (/v1/ping) and stay open; RSS
 *     per idle connection (RSS with them against RSS before, both without load), the CPU the idle
 *     gateway spends per second, and the CPU per request of an active load at c=10 beside them,
 *     taking turns with the bare proxy (which has none). The open-files limit (`ulimit -n`) must
 *     exceed the largest point by 1,000: checked before the curve;
 *   - the new surfaces on and off (surfaces.ts): compression per coding at the level of dynamic
 *     answers, traces sampled at 0 and at 1, the portal on, the providers' listener on;
 *   - with BENCH_BEFORE_ROOT (another checkout, built): that build against this one, on Redis,
 *     page 2, c=10 and c=50, taking turns (the before/after of this round's levers as a whole).
 *
 * Rounds of 1 s take turns between the targets of a comparison; each reports its median round.
 * Writes bench/results/curves.{json,md} and one SVG per curve.
 */
import autocannon from 'autocannon';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import Redis from 'ioredis';
import { stringify } from 'yaml';
import { loadGatewayConfig } from '../gateway/config/gateway-config';
import { createKeyAdmin } from '../gateway/keys/key-admin';
import { redisKeys } from '../gateway/keys/redis-layout';
import { ROOT, startNodeScript, startProcess, type RunningProcess } from '../test/kit/processes';
import { startRedis } from '../test/kit/redis-server';
import { renderLines } from './curves-chart';
import { IdlePool, openFiles, openFilesLimit, openIdle } from './idle-connections';
import { renderSurfaces, runSurfaces, type SurfacesResult } from './surfaces';
import { keysFileCurve, renderKeysFile, type KeysFileRow } from './keys-file-curve';
import { cpuSeconds, drainOutput, rssMb, SHIPPED_NODE_OPTIONS } from './proc-cpu';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const PAGE = 'country=GB&limit=20';
const KEY_VALUE = `curve-${randomBytes(12).toString('hex')}`;
const tmp = mkdtempSync(path.join(tmpdir(), 'gateway-curves-'));
const sha256 = (v: string): string => createHash('sha256').update(v).digest('hex');
const unlimited = { per_minute: 1_000_000_000, per_day: 1_000_000_000, per_month: 1_000_000_000 };
const running: RunningProcess[] = [];
const say = (line: string): void => void process.stdout.write(`  ${line}\n`);


function quiet(p: RunningProcess): RunningProcess {
  running.push(drainOutput(p));
  return p;
}


export interface Point { rps: number; cpuUs: number; p99: number; rssMb: number }
interface Target { url: string; pid: number; keys?: readonly string[] }

const load = (t: Target): object => {
  const keys = t.keys ?? [KEY_VALUE];
  if (keys.length === 1) return { headers: { 'x-api-key': keys[0]! } };
  const u = new URL(t.url);
  return { requests: keys.map((k) => ({ method: 'GET' as const, path: u.pathname + u.search, headers: { 'x-api-key': k } })) };
};

/** 1 s, or longer at high concurrency: on the loaded machine a 1 s round at c=200 may finish no request. */
const roundSeconds = (connections: number): number => (connections >= 100 ? 3 : 1);

async function once(t: Target, connections: number): Promise<Point | undefined> {
  const before = cpuSeconds(t.pid);
  const seconds = roundSeconds(connections);
  const r = await autocannon({ url: t.url, connections, duration: seconds, ...load(t) });
  if (r.non2xx > 0 || r.errors > 0) throw new Error(`${t.url}: ${r.requests.total} requests, ${r.non2xx} non-2xx, ${r.errors} errors`);
  // A round in which no answer finished (the machine stalled the process for the whole round) says nothing: left out.
  if (r.requests.total === 0) return undefined;
  return { rps: r.requests.total / seconds, cpuUs: ((cpuSeconds(t.pid) - before) * 1e6) / r.requests.total, p99: r.latency.p99, rssMb: rssMb(t.pid) };
}

const median = (v: number[]): number => [...v].sort((a, b) => a - b)[Math.floor(v.length / 2)]!;

/** Targets take turns in 1 s rounds after a 1 s warm-up each, the order turning each round; median round of each (RSS: the highest seen). */
export async function alternate(targets: readonly Target[], connections: number, rounds = SECONDS): Promise<Point[]> {
  for (const t of targets) await autocannon({ url: t.url, connections, duration: roundSeconds(connections), ...load(t) });
  const seen = targets.map((): Point[] => []);
  // The order turns each round: measured in a fixed order the first target came out dearer (the
  // keys-in-Redis sizes swapped places with the order), so no target keeps a position.
  for (let r = 0; r < rounds; r++) {
    for (let k = 0; k < targets.length; k++) {
      const i = (r + k) % targets.length;
      const point = await once(targets[i]!, connections);
      if (point) seen[i]!.push(point);
      else say(`a ${roundSeconds(connections)} s round of ${targets[i]!.url.slice(0, 40)}… finished no request: left out`);
    }
  }
  if (seen.some((ps) => ps.length === 0)) throw new Error('a target finished no request in any round');
  return seen.map((ps) => ({ rps: median(ps.map((p) => p.rps)), cpuUs: median(ps.map((p) => p.cpuUs)), p99: median(ps.map((p) => p.p99)), rssMb: Math.max(...ps.map((p) => p.rssMb)) }));
}

interface Env { backendUrl: string; redisUrl: string; keysFile: string; baseline: Target }

/** Variables with an empty value are left out (an empty REDIS_URL in `extra`: an embedded gateway). */
const withoutEmpty = (vars: Record<string, string>): Record<string, string> => Object.fromEntries(Object.entries(vars).filter(([, v]) => v !== ''));

async function gateway(env: Env, extra: Record<string, string> = {}, root = ROOT): Promise<{ proc: RunningProcess; startMs: number }> {
  const started = Date.now();
  const proc = await startNodeScript(path.join(root, 'dist', 'gateway', 'main.js'), withoutEmpty({
    PORT: '0', LOG_LEVEL: 'info', CURSOR_SECRET: randomBytes(32).toString('base64url'), GATEWAY_CONFIG: path.join(ROOT, 'config/gateway.yaml'),
    BACKEND_URL: env.backendUrl, KEYS_FILE: env.keysFile, REDIS_URL: env.redisUrl, KEY_STORE: 'redis', NODE_OPTIONS: SHIPPED_NODE_OPTIONS, ...extra,
  }), 60_000);
  return { proc: quiet(proc), startMs: Date.now() - started };
}

/** Page 2 of the walk through this gateway: its own cursor, so a real walk's request. */
async function page2(base: string, key = KEY_VALUE): Promise<string> {
  const first = (await (await fetch(`${base}/v1/properties?${PAGE}`, { headers: { 'x-api-key': key } })).json()) as { next_cursor?: string };
  if (!first.next_cursor) throw new Error(`${base}: no next_cursor on page 1`);
  return `${base}/v1/properties?${PAGE}&cursor=${first.next_cursor}`;
}

async function stop(p: RunningProcess): Promise<void> {
  running.splice(running.indexOf(p), 1);
  await p.stop();
}

export interface CurveRow { x: number | string; gateway: Point; baseline?: Point }
export interface Curves {
  date: string; node: string; seconds: number; loadBefore: number; loadAfter: number;
  concurrency: CurveRow[]; addresses: CurveRow[]; redisKeys: Array<CurveRow & { startMs: number }>; memory: CurveRow[]; memoryEmbedded?: CurveRow[]; builds?: CurveRow[];
  idle?: IdleRow[]; surfaces?: SurfacesResult; keysFile?: KeysFileRow[];
  /** When and under what load a curve was measured, by curve (idle): set when it was run. */
  conditions?: Record<string, string>;
}

export interface IdleRow extends CurveRow {
  x: number;
  /** RSS without load, before the idle sockets and with them. */
  rssBeforeMb: number; rssIdleMb: number;
  /** Gateway CPU ms per second of wall time while only the idle sockets are open (3 s). */
  idleCpuMsPerS: number;
  openMs: number; gatewayFiles: number; stillOpen: number;
}

const idleCpu = async (pid: number): Promise<number> => {
  const before = cpuSeconds(pid);
  await new Promise((resolve) => setTimeout(resolve, 3000));
  return ((cpuSeconds(pid) - before) * 1000) / 3;
};

async function idleCurve(env: Env, counts: readonly number[]): Promise<IdleRow[]> {
  // The npm scripts raise the soft limit to the hard one; a point that still does not fit is left out, said so.
  const limit = openFilesLimit();
  const fits = counts.filter((n) => n + 1000 <= limit);
  for (const n of counts.filter((c) => !fits.includes(c))) say(`idle connections ${n}: left out, the open-files limit is ${limit} (needs ${n + 1000}: \`ulimit -n ${n + 1000}\` before the run)`);
  const rows: IdleRow[] = [];
  for (const n of fits) {
    const gw = await gateway(env);
    const pid = gw.proc.child.pid!;
    const target = { url: await page2(gw.proc.url), pid };
    await autocannon({ url: target.url, connections: 10, duration: 2, ...load(target) }); // warm-up
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const rssBeforeMb = rssMb(pid);
    const pool = new IdlePool();
    const t0 = Date.now();
    await openIdle(pool, gw.proc.port, '/v1/ping', KEY_VALUE, n);
    const openMs = Date.now() - t0;
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const rssIdleMb = rssMb(pid);
    const gatewayFiles = openFiles(pid);
    const idleCpuMsPerS = await idleCpu(pid);
    const [g, b] = await alternate([target, env.baseline], 10);
    const stillOpen = pool.sockets.length - pool.closed;
    pool.destroy();
    await stop(gw.proc);
    const row: IdleRow = { x: n, gateway: g!, baseline: b!, rssBeforeMb, rssIdleMb, idleCpuMsPerS, openMs, gatewayFiles, stillOpen };
    rows.push(row);
    say(`idle connections ${n}: RSS ${rssBeforeMb.toFixed(0)} → ${rssIdleMb.toFixed(0)} MB${n ? ` (${(((rssIdleMb - rssBeforeMb) * 1024) / n).toFixed(1)} KB each)` : ''}, idle CPU ${idleCpuMsPerS.toFixed(1)} ms/s; active c=10: ${g!.cpuUs.toFixed(0)} µs CPU/req (baseline ${b!.cpuUs.toFixed(0)}), p99 ${g!.p99} ms; ${stillOpen} still open`);
  }
  return rows;
}

async function concurrencyCurve(env: Env): Promise<CurveRow[]> {
  const gw = await gateway(env);
  const target = { url: await page2(gw.proc.url), pid: gw.proc.child.pid! };
  const rows: CurveRow[] = [];
  for (const c of [1, 10, 25, 50, 100, 200]) {
    const [g, b] = await alternate([target, env.baseline], c);
    rows.push({ x: c, gateway: g!, baseline: b! });
    say(`concurrency ${c}: gateway ${g!.cpuUs.toFixed(0)} µs CPU/req, p99 ${g!.p99} ms, ${g!.rps.toFixed(0)} req/s; baseline ${b!.cpuUs.toFixed(0)} µs, p99 ${b!.p99} ms`);
  }
  await stop(gw.proc);
  return rows;
}

/** Entries the address curve binds keys to: ranges that never hold 127.0.0.1, IPv4 and IPv6 mixed. */
const OTHER_RANGES = [
  '10.0.0.0/8', '2001:db8::/32', '172.16.0.0/12', 'fd00::/8', '192.168.0.0/16', '2001:db8:1::/48', '198.51.100.0/24', 'fe80::/10',
  '203.0.113.0/25', '2001:db8:2:3::/64', '100.64.0.0/10', '2001:db8:4::/56', '192.0.2.0/27', '2001:db8:5:6::/96', '198.18.0.0/15',
];

async function addressCurve(env: Env, counts: readonly number[]): Promise<CurveRow[]> {
  const keyOf = (n: number): string => `${KEY_VALUE}-a${n}`;
  const file = path.join(tmp, 'keys-addresses.yaml');
  writeFileSync(file, stringify({ keys: counts.map((n) => ({
    id: `addr-${n}`, key_sha256: sha256(keyOf(n)), tier: 'advanced', countries: ['GB'], status: 'active', limits: unlimited,
    addresses: [...OTHER_RANGES.slice(0, n - 1), '127.0.0.0/8'],
  })) }));
  const gw = await gateway(env, { KEYS_FILE: file, KEY_STORE: 'file' });
  const pid = gw.proc.child.pid!;
  const targets = await Promise.all(counts.map(async (n) => ({ url: await page2(gw.proc.url, keyOf(n)), pid, keys: [keyOf(n)] })));
  const points = await alternate(targets, 10);
  await stop(gw.proc);
  return counts.map((n, i) => {
    say(`addresses per key ${n}: ${points[i]!.cpuUs.toFixed(0)} µs CPU/req, p99 ${points[i]!.p99} ms`);
    return { x: n, gateway: points[i]! };
  });
}

const fillerValue = (i: number): string => `filler-${i}-${KEY_VALUE}`;

/** Filler records straight into Redis in the key store's layout, pipelined (what `keys import` leaves, minus its checks). */
async function fillRedis(redis: Redis, from: number, to: number): Promise<void> {
  const now = new Date().toISOString();
  for (let start = from; start < to; start += 10_000) {
    const batch = redis.pipeline();
    for (let i = start; i < Math.min(to, start + 10_000); i++) {
      const record = { id: `c${i}`, key_sha256: sha256(fillerValue(i)), tier: 'advanced', countries: ['GB'], address: '127.0.0.1', status: 'active', limits: unlimited, created_at: now, updated_at: now };
      batch.set(redisKeys.record(record.id), JSON.stringify(record));
      batch.set(redisKeys.byHash(record.key_sha256), record.id);
      batch.sadd(redisKeys.ids, record.id);
    }
    await batch.exec();
  }
}

/**
 * One redis-server per size, each filled, a fresh gateway on each; then all the gateways and the
 * baseline take turns, so the sizes are compared in the same rounds (one after another, the drift of
 * the shared machine over minutes was larger than any effect of the size).
 */
async function redisKeysCurve(env: Env, sizes: readonly number[]): Promise<Array<CurveRow & { startMs: number }>> {
  const servers: Array<Awaited<ReturnType<typeof startRedis>>> = [];
  try {
    const gws: Array<{ proc: RunningProcess; startMs: number; keys: string[] }> = [];
    for (const size of sizes) {
      const server = await startRedis();
      servers.push(server);
      const redis = new Redis(server.url);
      const t0 = Date.now();
      await fillRedis(redis, 0, size);
      say(`keys in Redis: ${size.toLocaleString('en')} filled in ${((Date.now() - t0) / 1000).toFixed(0)} s; Redis ${(await redis.info('memory')).match(/used_memory_human:(\S+)/)?.[1] ?? '?'}`);
      redis.disconnect();
      const gw = await gateway({ ...env, redisUrl: server.url });
      gws.push({ ...gw, keys: Array.from({ length: 1000 }, (_, i) => fillerValue(Math.floor((i * size) / 1000))) });
    }
    const points = await alternate([...gws.map((g) => ({ url: `${g.proc.url}/v1/properties?${PAGE}`, pid: g.proc.child.pid!, keys: g.keys })), env.baseline], 10);
    for (const g of gws) await stop(g.proc);
    const base = points[points.length - 1]!;
    return sizes.map((size, i) => {
      say(`keys in Redis ${size}: start-up ${gws[i]!.startMs} ms, ${points[i]!.cpuUs.toFixed(0)} µs CPU/req (baseline ${base.cpuUs.toFixed(0)}), RSS ${points[i]!.rssMb.toFixed(0)} MB`);
      return { x: size, gateway: points[i]!, baseline: base, startMs: gws[i]!.startMs };
    });
  } finally {
    await Promise.all(servers.map((s) => s.stop()));
  }
}

/** `embedded`: the keys file and memory counters (no Redis) instead of Redis for both. */
async function memoryComparison(env: Env, embedded = false): Promise<CurveRow[]> {
  // CURVE_SEMI: the semi-space sizes to compare, in MB (0: V8's own sizing); default 0,8,4,2.
  const variants = (process.env.CURVE_SEMI ?? '0,8,4,2').split(',').map((mb) => (mb === '0' ? '' : `--max-semi-space-size=${mb}`));
  const gws = [];
  for (const v of variants) gws.push(await gateway(env, { NODE_OPTIONS: v, ...(embedded ? { KEY_STORE: 'file', REDIS_URL: '' } : {}) }));
  const targets = await Promise.all(gws.map(async (g) => ({ url: await page2(g.proc.url), pid: g.proc.child.pid! })));
  const points = await alternate(targets, 50);
  for (const g of gws) await stop(g.proc);
  return variants.map((v, i) => {
    say(`memory${embedded ? ', embedded' : ''} ${v || 'V8 default'}: RSS ${points[i]!.rssMb.toFixed(0)} MB, ${points[i]!.cpuUs.toFixed(0)} µs CPU/req, p99 ${points[i]!.p99} ms`);
    return { x: v || 'V8 default', gateway: points[i]! };
  });
}

async function buildsComparison(env: Env, beforeRoot: string): Promise<CurveRow[]> {
  const before = await gateway(env, {}, beforeRoot);
  const after = await gateway(env);
  const targets = [{ url: await page2(before.proc.url), pid: before.proc.child.pid! }, { url: await page2(after.proc.url), pid: after.proc.child.pid! }];
  const rows: CurveRow[] = [];
  for (const c of [10, 50]) {
    const [b, a, base] = await alternate([...targets, env.baseline], c);
    rows.push({ x: `before c=${c}`, gateway: b!, baseline: base! }, { x: `after c=${c}`, gateway: a!, baseline: base! });
    say(`builds c=${c}: before ${b!.cpuUs.toFixed(0)} µs CPU/req, after ${a!.cpuUs.toFixed(0)} µs (${(a!.cpuUs / b!.cpuUs).toFixed(2)}×), baseline ${base!.cpuUs.toFixed(0)} µs`);
  }
  await stop(before.proc);
  await stop(after.proc);
  return rows;
}

const f0 = (n: number): string => n.toFixed(0);
function table(rows: readonly CurveRow[], head: string, extra?: (r: CurveRow) => string, extraHead = ''): string {
  return [
    `| ${head} | gateway CPU µs/req | gateway p99 ms | gateway req/s | RSS MB | baseline CPU µs/req | × baseline CPU |${extraHead}`,
    `|---|---|---|---|---|---|---|${'---|'.repeat(extraHead.split('|').length - 1)}`,
    ...rows.map((r) => `| ${r.x} | ${f0(r.gateway.cpuUs)} | ${r.gateway.p99} | ${f0(r.gateway.rps)} | ${f0(r.gateway.rssMb)} | ${r.baseline ? f0(r.baseline.cpuUs) : '—'} | ${r.baseline ? (r.gateway.cpuUs / r.baseline.cpuUs).toFixed(2) : '—'} |${extra ? ` ${extra(r)} |` : ''}`),
    '',
  ].join('\n');
}

export function renderCurves(c: Curves): string {
  const out = [
    `Cost curves of ${c.date} (${c.node}; ${c.seconds} alternating 1 s rounds per point, median round; RSS the highest seen; load average ${c.loadBefore.toFixed(1)} before, ${c.loadAfter.toFixed(1)} after, the machine shared). Gateway on Redis (counters and key store), ${SHIPPED_NODE_OPTIONS} as shipped, unless said.`,
    '', '### Concurrency (page 2, a cursor in and out)', '', table(c.concurrency, 'connections'),
    '### Addresses per key (c=10, keys file, Redis counters)', '', table(c.addresses, 'entries'),
    '### Keys in Redis (first page, c=10, over 1,000 of the keys)', '', table(c.redisKeys, 'keys', (r) => `${(r as CurveRow & { startMs: number }).startMs}`, ' start-up ms |'),
    '### Memory: the young generation (c=50, page 2)', '', table(c.memory, 'NODE_OPTIONS'),
  ];
  if (c.memoryEmbedded?.length) out.push('### Memory, embedded gateway (keys file, memory counters; c=50, page 2)', '', table(c.memoryEmbedded, 'NODE_OPTIONS'));
  if (c.idle?.length) {
    out.push('### Idle keep-alive connections (a fresh gateway per point; each socket made one request, /v1/ping, and stays open; active load page 2 at c=10 beside them, taking turns with the bare proxy)', '',
      ...(c.conditions?.idle ? [`Measured ${c.conditions.idle}.`, ''] : []),
      table(c.idle, 'idle connections', (r) => {
        const i = r as IdleRow;
        return `${f0(i.rssBeforeMb)} → ${f0(i.rssIdleMb)} | ${i.x ? (((i.rssIdleMb - i.rssBeforeMb) * 1024) / i.x).toFixed(1) : '—'} | ${i.idleCpuMsPerS.toFixed(1)} | ${i.openMs} | ${i.stillOpen}`;
      }, ' RSS MB idle, before → with them | KB per idle connection | idle CPU ms/s | opened in ms | still open after |'));
  }
  if (c.keysFile?.length) out.push('### Keys in the keys file (embedded gateway: memory counters; first page, c=10, over 1,000 of the keys; the sizes and the baseline taking turns)', '', ...(c.conditions?.['keys-file'] ? [`Measured ${c.conditions['keys-file']}.`, ''] : []), renderKeysFile(c.keysFile));
  if (c.surfaces) out.push('### The new surfaces on and off (gateways on Redis taking turns, first page, c=10)', '', ...(c.conditions?.surfaces ? [`Measured ${c.conditions.surfaces}.`, ''] : []), renderSurfaces(c.surfaces));
  if (c.builds) out.push('### This round against the code before it (page 2, side by side)', '', table(c.builds, 'build'));
  return out.join('\n');
}

export async function runCurves(o: { backendUrl: string; redisUrl: string; baselineUrl: string; baselinePid: number; redis: Redis }): Promise<Curves> {
  const config = loadGatewayConfig(path.join(ROOT, 'config/gateway.yaml'));
  const keysFile = path.join(tmp, 'keys.yaml');
  writeFileSync(keysFile, stringify({ keys: [{ id: 'curve', key_sha256: sha256(KEY_VALUE), tier: 'advanced', countries: ['GB'], address: '127.0.0.1', status: 'active', limits: unlimited }] }));
  await createKeyAdmin(o.redis, config).import(keysFile);
  const internal = (await (await fetch(`${o.backendUrl}/internal/v1/listings?${PAGE}`)).json()) as { next_after: string };
  const env: Env = { ...o, keysFile, baseline: { url: `${o.baselineUrl}/internal/v1/listings?${PAGE}&after=${encodeURIComponent(internal.next_after)}`, pid: o.baselinePid } };
  const only = process.env.CURVES ? new Set(process.env.CURVES.split(',')) : undefined;
  const wanted = (n: string): boolean => !only || only.has(n);
  const loadBefore = loadavg()[0]!;
  const sizes = (process.env.CURVE_KEYS ?? '1000,100000,1000000').split(',').map(Number);
  const beforeRoot = process.env.BENCH_BEFORE_ROOT;
  const result0: Pick<Curves, 'conditions'> = { conditions: {} };
  const result: Curves = {
    date: new Date().toISOString(), node: process.version, seconds: SECONDS, loadBefore, loadAfter: 0,
    builds: beforeRoot && wanted('builds') ? await buildsComparison(env, beforeRoot) : undefined,
    memory: wanted('memory') ? await memoryComparison(env) : [],
    memoryEmbedded: wanted('memory-embedded') ? await memoryComparison(env, true) : [],
    concurrency: wanted('concurrency') ? await concurrencyCurve(env) : [],
    addresses: wanted('addresses') ? await addressCurve(env, [1, 2, 4, 8, 16]) : [],
    redisKeys: wanted('keys') ? await redisKeysCurve(env, sizes) : [],
    idle: wanted('idle') ? await conditionsOf('idle', result0, () => idleCurve(env, (process.env.CURVE_IDLE ?? '0,100,1000,10000').split(',').map(Number))) : [],
    keysFile: wanted('keys-file') ? await conditionsOf('keys-file', result0, () => keysFileCurve((process.env.CURVE_KEYS_FILE ?? '1000,10000,100000,200000').split(',').map(Number), {
      dir: tmp, page: PAGE, baseline: env.baseline, valueOf: fillerValue, start: (extra) => gateway(env, extra), alternate: (t, c) => alternate(t, c), stop, say,
    })) : undefined,
    surfaces: wanted('surfaces') ? await conditionsOf('surfaces', result0, () => runSurfaces({ redisUrl: o.redisUrl, backendUrl: o.backendUrl, seconds: SECONDS })) : undefined,
  };
  result.loadAfter = loadavg()[0]!;
  if (Object.keys(result0.conditions!).length > 0) result.conditions = result0.conditions;
  return result;
}

/** Runs one curve and notes when and under what load (the curves of a CURVES=… run keep the others' from before). */
async function conditionsOf<T>(name: string, into: Pick<Curves, 'conditions'>, run: () => Promise<T>): Promise<T> {
  const before = loadavg()[0]!;
  const date = new Date().toISOString().slice(0, 16).replace('T', ' ');
  const value = await run();
  into.conditions![name] = `${date} UTC, ${process.version}, ${SECONDS} rounds per point, load average ${before.toFixed(1)} before, ${loadavg()[0]!.toFixed(1)} after`;
  return value;
}

export function writeCurves(c: Curves): void {
  const dir = path.join(ROOT, 'bench/results');
  writeFileSync(path.join(dir, 'curves.json'), `${JSON.stringify(c, null, 2)}\n`);
  writeFileSync(path.join(dir, 'curves.md'), `# Cost curves\n\n${renderCurves(c)}`);
  const plot = (name: string, title: string, xLabel: string, rows: readonly CurveRow[], withP99 = true): void => {
    if (rows.length === 0) return;
    const series = [{ name: 'gateway CPU µs/req', values: rows.map((r) => r.gateway.cpuUs) }];
    if (rows[0]!.baseline) series.push({ name: 'baseline proxy CPU µs/req', values: rows.map((r) => r.baseline!.cpuUs) });
    if (withP99) series.push({ name: 'gateway p99 ms', values: rows.map((r) => r.gateway.p99) });
    writeFileSync(path.join(dir, `curve-${name}.svg`), renderLines(title, xLabel, rows.map((r) => r.x), series));
  };
  plot('concurrency', 'Gateway on Redis, page 2: CPU per request and p99 by concurrency', 'connections (keep-alive)', c.concurrency);
  plot('addresses', 'CPU per request by the number of address entries of the key (c=10)', 'address entries (CIDR ranges, IPv4 and IPv6)', c.addresses);
  if (c.idle?.length) {
    const idle = c.idle.filter((r) => r.x > 0);
    writeFileSync(path.join(dir, 'curve-idle-connections.svg'), renderLines('Idle keep-alive connections: memory, idle CPU and CPU per active request (c=10)', 'idle keep-alive connections', idle.map((r) => r.x), [
      { name: 'KB of RSS per idle connection', values: idle.map((r) => ((r.rssIdleMb - r.rssBeforeMb) * 1024) / r.x) },
      { name: 'idle gateway CPU ms/s', values: idle.map((r) => r.idleCpuMsPerS) },
      { name: 'gateway CPU µs per active request', values: idle.map((r) => r.gateway.cpuUs) },
      { name: 'baseline proxy CPU µs/req (no idle sockets)', values: idle.map((r) => r.baseline!.cpuUs) },
    ]));
  }
  if (c.surfaces) {
    const rows = c.surfaces.rows;
    writeFileSync(path.join(dir, 'curve-surfaces.svg'), renderLines('The new surfaces on and off: gateway CPU µs per request (first page, c=10, same rounds)', '', rows.map((r) => r.short), [
      { name: 'gateway CPU µs/req', values: rows.map((r) => r.cpuUs) },
      { name: 'p99 ms', values: rows.map((r) => r.p99) },
    ]));
  }
  if (c.keysFile?.length) {
    const rows = c.keysFile;
    writeFileSync(path.join(dir, 'curve-keys-file.svg'), renderLines('Keys in the keys file: start-up, memory and CPU per request (c=10)', 'keys in the file', rows.map((r) => r.x), [
      { name: 'start-up ms', values: rows.map((r) => r.startMs) },
      { name: 'RSS under load MB', values: rows.map((r) => r.gateway.rssMb) },
      { name: 'gateway CPU µs/req', values: rows.map((r) => r.gateway.cpuUs) },
      { name: 'baseline proxy CPU µs/req', values: rows.map((r) => r.baseline.cpuUs) },
    ]));
  }
  plot('redis-keys', 'CPU per request by the number of keys in Redis (c=10, 1,000 keys in use)', 'keys in the Redis key store', c.redisKeys, false);
}

async function main(): Promise<void> {
  const backend = quiet(await startProcess('backend-mock/main.js', { BACKEND_PORT: '0', LOG_LEVEL: 'info' }, 60_000));
  const baseline = quiet(await startNodeScript(path.join(ROOT, 'bench/baseline-proxy.js'), { TARGET_URL: backend.url }));
  const redisServer = await startRedis();
  const redis = new Redis(redisServer.url);
  try {
    process.stdout.write(`curves (node ${process.version}, ${SECONDS} rounds per point):\n`);
    const fresh = await runCurves({ backendUrl: backend.url, redisUrl: redisServer.url, baselineUrl: baseline.url, baselinePid: baseline.child.pid!, redis });
    // CURVES=a,b runs some curves only: the others are kept from the last results.
    const file = path.join(ROOT, 'bench/results/curves.json');
    const kept = process.env.CURVES && existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as Curves) : undefined;
    // The header's date and load describe the first curves: kept unless one of them was run now
    // (idle and surfaces carry their own in `conditions`).
    const headerRun = ['concurrency', 'addresses', 'redisKeys', 'memory', 'memoryEmbedded', 'builds'].some((k) => ((fresh as unknown as Record<string, unknown[] | undefined>)[k]?.length ?? 0) > 0);
    const curves: Curves = kept
      ? { ...kept, ...Object.fromEntries(Object.entries(fresh).filter(([k, v]) => (['date', 'node', 'seconds', 'loadBefore', 'loadAfter'].includes(k) ? headerRun : k !== 'conditions' && (Array.isArray(v) ? v.length > 0 : v !== undefined)))), conditions: { ...kept.conditions, ...fresh.conditions } }
      : fresh;
    writeCurves(curves);
    process.stdout.write(`\n${renderCurves(curves)}\nwritten: bench/results/curves.{json,md}, curve-*.svg\n`);
  } finally {
    redis.disconnect();
    await Promise.all(running.map((p) => p.stop().catch(() => undefined)));
    await redisServer.stop();
  }
}

if (require.main === module) {
  main().catch(async (err: unknown) => {
    process.stderr.write(`curves failed: ${(err as Error).stack ?? String(err)}\n`);
    await Promise.all(running.map((p) => p.stop().catch(() => undefined)));
    process.exit(1);
  });
}
