/**
 * `npm run bench`: the data service, a bare node:http server answering the gateway's page from
 * memory (the floor of one HTTP answer in Node), a bare node:http pass-through proxy (the baseline),
 * the peer a Node team would write (Fastify + reply-from + rate-limit on the same Redis,
 * bench/peers/), and the gateway embedded (memory counters, YAML keys) and with Redis (counters and
 * key store), all driven by autocannon on keep-alive connections at concurrency 1, 10 and 50, taking
 * turns in 1 s rounds (median round of each). Prints and writes to bench/results/: requests/s,
 * p50/p99 latency, CPU µs per request of each server process (from /proc), RSS, and the ratios to
 * the baseline and to the bare server measured in the same run; a CPU profile of the gateway on Redis
 * at c=50 (top functions, per-step budget: profile.ts); page-depth cost, key-store scale (100,000
 * keys in the keys file and in Redis) and the performance issue's levers, before/after (levers.ts).
 * Compression per coding and tracing off / on (edges.ts); /v1 with the holders' portal on and off
 * (portal.ts); and with the providers' listener on and off (hooks.ts); two processes on one port
 * with reusePort against GATEWAY_WORKERS=2 (reuse-port.ts); the cost curves, idle keep-alive
 * connections and the new surfaces on and off among them (curves.ts).
 *
 * BENCH_SECONDS (default 5) sets the number of measured 1 s rounds (and the length of other runs).
 */
import autocannon from 'autocannon';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Redis from 'ioredis';
import { stringify } from 'yaml';
import { loadGatewayConfig } from '../gateway/config/gateway-config';
import { createKeyAdmin } from '../gateway/keys/key-admin';
import { redisKeys } from '../gateway/keys/redis-layout';
import { ROOT, startNodeScript, startProcess, type RunningProcess } from '../test/kit/processes';
import { startRedis } from '../test/kit/redis-server';
import { Pool } from 'undici';
import { renderEdges, runEdges } from './edges';
import { renderPortal, runPortal } from './portal';
import { renderHooks, runHooks } from './hooks';
import { renderLevers, runLevers } from './levers';
import { renderWorkers, runWorkers } from './workers';
import { renderReusePort, runReusePort } from './reuse-port';
import { renderCurves, runCurves, writeCurves } from './curves';
import { cpuSeconds, drainOutput, rssMb, SHIPPED_NODE_OPTIONS } from './proc-cpu';
import { renderProfile, summariseProfile } from './profile';
import { renderChart, renderMarkdown, type Latency, type Row } from './report';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const CONCURRENCY = [1, 10, 50];
const KEY_VALUE = `bench-${randomBytes(12).toString('hex')}`;
/** The same ~7.9 KB page (20 listings) everywhere: the issue's targets are for a 5–8 KB page. */
const PAGE = 'country=GB&limit=20';
const tmp = mkdtempSync(path.join(tmpdir(), 'gateway-bench-'));
const running: RunningProcess[] = [];

const sha256 = (v: string): string => createHash('sha256').update(v).digest('hex');
const unlimited = { per_minute: 1_000_000_000, per_day: 1_000_000_000, per_month: 1_000_000_000 };

/** The value of filler key `i` of the key-store scale test (bound to 127.0.0.1, so the bench can use them). */
const fillerValue = (i: number): string => `filler-${i}-${KEY_VALUE}`;
const fillerRecord = (i: number) => ({ id: `k${i}`, key_sha256: sha256(fillerValue(i)), tier: 'advanced', countries: ['GB'], address: '127.0.0.1', status: 'active', limits: { ...unlimited } });

function keysFile(extra: number): string {
  const keys = [{ id: 'bench', key_sha256: sha256(KEY_VALUE), tier: 'advanced', countries: ['GB', 'FR', 'DE'], address: '127.0.0.1', status: 'active', limits: unlimited }];
  for (let i = 0; i < extra; i++) keys.push(fillerRecord(i));
  const file = path.join(tmp, `keys-${extra}.yaml`);
  writeFileSync(file, stringify({ keys }));
  return file;
}

/**
 * Writes `count` filler records straight into Redis in the key store's layout (pipelined), as
 * `keys import` would leave them: the benchmark measures the gateway with 100,000 stored keys, not
 * the import (which checks and announces each key on its own, and takes minutes for 100,000).
 */
async function fillRedisKeys(redis: Redis, count: number): Promise<void> {
  const now = new Date().toISOString();
  for (let start = 0; start < count; start += 5000) {
    const batch = redis.pipeline();
    for (let i = start; i < Math.min(count, start + 5000); i++) {
      const record = fillerRecord(i);
      batch.set(redisKeys.record(record.id), JSON.stringify({ ...record, created_at: now, updated_at: now }));
      batch.set(redisKeys.byHash(record.key_sha256), record.id);
      batch.sadd(redisKeys.ids, record.id);
    }
    await batch.exec();
  }
}

/** Drains a process's output once it listens: the benchmark must not buffer a million log lines. */
function quiet(p: RunningProcess): RunningProcess {
  running.push(drainOutput(p));
  return p;
}


interface Measure { rps: number; p50: number; p99: number; cpuUs?: number; rssMb?: number; non2xx: number }

async function drive(url: string, connections: number, pid?: number, seconds = SECONDS, keyValues: readonly string[] = [KEY_VALUE], warmUpSeconds = 1): Promise<Measure> {
  // One key: its header on every request. Several: each connection walks through them in turn.
  const target = new URL(url);
  const load = keyValues.length === 1
    ? { headers: { 'x-api-key': keyValues[0]! } }
    : { requests: keyValues.map((value) => ({ method: 'GET' as const, path: target.pathname + target.search, headers: { 'x-api-key': value } })) };
  await autocannon({ url, connections, duration: warmUpSeconds, ...load }); // warm-up: JIT, pools, caches
  const cpuBefore = pid ? cpuSeconds(pid) : 0;
  const result = await autocannon({ url, connections, duration: seconds, ...load });
  const cpu = pid ? cpuSeconds(pid) - cpuBefore : 0;
  return {
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    ...(pid ? { cpuUs: (cpu * 1e6) / result.requests.total, rssMb: rssMb(pid) } : {}),
    non2xx: result.non2xx,
  };
}

interface Target { name: string; url: string; pid?: number }

/**
 * Several targets compared fairly on a noisy machine: after a warm-up of each, they take turns in
 * 1 s rounds (SECONDS rounds each) and each reports its median round (req/s and CPU per request
 * taken separately), so a slow moment of the machine does not land on one target only.
 */
async function alternate(targets: readonly Target[], connections: number): Promise<Measure[]> {
  const headers = { 'x-api-key': KEY_VALUE };
  for (const t of targets) await autocannon({ url: t.url, connections, duration: 1, headers });
  const rounds: Measure[][] = targets.map(() => []);
  for (let round = 0; round < SECONDS; round++) {
    for (const [i, t] of targets.entries()) {
      const cpuBefore = t.pid ? cpuSeconds(t.pid) : 0;
      const result = await autocannon({ url: t.url, connections, duration: 1, headers });
      const cpu = t.pid ? { cpuUs: ((cpuSeconds(t.pid) - cpuBefore) * 1e6) / result.requests.total, rssMb: rssMb(t.pid) } : {};
      rounds[i]!.push({ rps: result.requests.average, p50: result.latency.p50, p99: result.latency.p99, ...cpu, non2xx: result.non2xx });
    }
  }
  const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
  return rounds.map((measures) => {
    const mid = [...measures].sort((a, b) => a.rps - b.rps)[Math.floor(measures.length / 2)]!;
    return measures[0]!.cpuUs === undefined ? mid : { ...mid, cpuUs: median(measures.map((m) => m.cpuUs!)) };
  });
}

/**
 * Latency with sub-millisecond resolution (autocannon reports whole milliseconds): `concurrency`
 * loops of sequential keep-alive requests, each timed with hrtime; p50 and p99 in ms.
 */
async function latency(url: string, concurrency: number, perLoop: number): Promise<Latency> {
  const target = new URL(url);
  const pool = new Pool(target.origin, { connections: concurrency });
  const samples: number[] = [];
  const loop = async (record: boolean, count: number): Promise<void> => {
    for (let i = 0; i < count; i++) {
      const started = process.hrtime.bigint();
      const answer = await pool.request({ path: target.pathname + target.search, method: 'GET', headers: { 'x-api-key': KEY_VALUE } });
      await answer.body.text();
      if (record) samples.push(Number(process.hrtime.bigint() - started) / 1e6);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, () => loop(false, 200))); // warm-up
  await Promise.all(Array.from({ length: concurrency }, () => loop(true, perLoop)));
  await pool.close();
  samples.sort((a, b) => a - b);
  const at = (q: number): number => samples[Math.min(samples.length - 1, Math.floor(q * samples.length))]!;
  return { p50: at(0.5), p99: at(0.99) };
}

async function firstCursorAt(base: string, page: number, query = PAGE): Promise<string> {
  let cursor = '';
  for (let i = 1; i < page; i++) {
    const answer = await fetch(`${base}/v1/properties?${query}${cursor ? `&cursor=${cursor}` : ''}`, { headers: { 'x-api-key': KEY_VALUE } });
    const body = (await answer.json()) as { next_cursor: string | null };
    if (!body.next_cursor) throw new Error(`only ${i} pages`);
    cursor = body.next_cursor;
  }
  return cursor;
}

async function startGateway(env: Record<string, string>): Promise<{ proc: RunningProcess; startMs: number }> {
  const started = Date.now();
  const proc = await startProcess('gateway/main.js', { PORT: '0', LOG_LEVEL: 'info', NODE_OPTIONS: SHIPPED_NODE_OPTIONS, CURSOR_SECRET: randomBytes(32).toString('base64url'), GATEWAY_CONFIG: path.join(ROOT, 'config/gateway.yaml'), ...env }, 60_000);
  return { proc: quiet(proc), startMs: Date.now() - started };
}

async function main(): Promise<void> {
  const rows: Row[] = [];
  const backend = quiet(await startProcess('backend-mock/main.js', { BACKEND_PORT: '0', LOG_LEVEL: 'info' }, 60_000));
  const baseline = quiet(await startNodeScript(path.join(ROOT, 'bench/baseline-proxy.js'), { TARGET_URL: backend.url }));
  const redisServer = await startRedis();
  const redis = new Redis(redisServer.url);
  const config = loadGatewayConfig(path.join(ROOT, 'config/gateway.yaml'));
  const keys1 = keysFile(0);
  await createKeyAdmin(redis, config).import(keys1);

  const embedded = await startGateway({ BACKEND_URL: backend.url, KEYS_FILE: keys1 });
  const withRedis = await startGateway({ BACKEND_URL: backend.url, KEYS_FILE: keys1, REDIS_URL: redisServer.url, KEY_STORE: 'redis' });

  // The same page everywhere (page 2 of one query); through the gateways with a cursor (decrypt +
  // encrypt) as a real walk does.
  const cursorEmbedded = await firstCursorAt(embedded.proc.url, 2);
  const cursorRedis = await firstCursorAt(withRedis.proc.url, 2);
  const internalPath = `/internal/v1/listings?${PAGE}&after=${encodeURIComponent((await (await fetch(`${backend.url}/internal/v1/listings?${PAGE}`)).json() as { next_after: string }).next_after)}`;
  const redisUrl = `${withRedis.proc.url}/v1/properties?${PAGE}&cursor=${cursorRedis}`;

  // The floor: the gateway's own answer bytes, served from memory by a bare node:http server.
  const pageBytes = Buffer.from(await (await fetch(redisUrl, { headers: { 'x-api-key': KEY_VALUE } })).arrayBuffer());
  const pageFile = path.join(tmp, 'page.json');
  writeFileSync(pageFile, pageBytes);
  const bare = quiet(await startNodeScript(path.join(ROOT, 'bench/peers/bare-page.js'), { PAGE_FILE: pageFile }));
  // The peer: the bench key and 999 others, a per-key minute window on the same Redis.
  const peerKeys = path.join(tmp, 'peer-keys.json');
  writeFileSync(peerKeys, JSON.stringify([{ id: 'bench', key_sha256: sha256(KEY_VALUE) }, ...Array.from({ length: 999 }, (_, i) => ({ id: `k${i}`, key_sha256: sha256(fillerValue(i)) }))]));
  const peer = quiet(await startNodeScript(path.join(ROOT, 'bench/peers/fastify-peer.js'), { KEYS_FILE: peerKeys, REDIS_URL: redisServer.url, TARGET_URL: backend.url }));

  const targets: Target[] = [
    { name: 'data service, direct', url: `${backend.url}${internalPath}` },
    { name: 'bare node:http, page from memory', url: `${bare.url}/`, pid: bare.child.pid },
    { name: 'baseline: bare node:http proxy', url: `${baseline.url}${internalPath}`, pid: baseline.child.pid },
    { name: 'peer: Fastify + reply-from + rate-limit (Redis)', url: `${peer.url}/v1/properties?${internalPath.split('?')[1]}`, pid: peer.child.pid },
    { name: 'gateway, embedded (memory counters, YAML keys)', url: `${embedded.proc.url}/v1/properties?${PAGE}&cursor=${cursorEmbedded}`, pid: embedded.proc.child.pid },
    { name: 'gateway, Redis counters + Redis key store', url: redisUrl, pid: withRedis.proc.child.pid },
  ];
  for (const c of CONCURRENCY) {
    const measured = await alternate(targets, c);
    const base = measured[targets.findIndex((t) => t.name.startsWith('baseline'))]!;
    const floor = measured[targets.findIndex((t) => t.name.startsWith('bare'))]!;
    for (const [i, t] of targets.entries()) {
      const m = measured[i]!;
      const ratio = t.name.startsWith('data service') || t.name.startsWith('bare') ? undefined : m.rps / base.rps;
      const cpuVsBare = m.cpuUs !== undefined && !t.name.startsWith('bare') ? m.cpuUs / floor.cpuUs! : undefined;
      rows.push({ config: t.name, concurrency: c, ...m, ratio, cpuVsBare });
      process.stdout.write(`  ${t.name.padEnd(48)} c=${String(c).padEnd(3)} ${m.rps.toFixed(0).padStart(7)} req/s  p50 ${m.p50} ms  p99 ${m.p99} ms` +
        `${m.cpuUs !== undefined ? `  ${m.cpuUs.toFixed(0)} µs CPU/req  RSS ${m.rssMb!.toFixed(0)} MB` : ''}${m.non2xx ? `  non-2xx ${m.non2xx}` : ''}\n`);
    }
  }
  await Promise.all([bare, peer].map((p) => p.stop()));

  // Added latency, measured precisely: baseline vs the full gateway (Redis), c=1 and c=10.
  const baselineUrl = targets.find((t) => t.name.startsWith('baseline'))!.url;
  const latencies = {
    baselineC1: await latency(baselineUrl, 1, 3000),
    gatewayC1: await latency(redisUrl, 1, 3000),
    baselineC10: await latency(baselineUrl, 10, 500),
    gatewayC10: await latency(redisUrl, 10, 500),
  };
  process.stdout.write(`  latency (ms): c=1 baseline p50 ${latencies.baselineC1.p50.toFixed(3)} gateway p50 ${latencies.gatewayC1.p50.toFixed(3)}; c=10 baseline p99 ${latencies.baselineC10.p99.toFixed(3)} gateway p99 ${latencies.gatewayC10.p99.toFixed(3)}\n`);

  // A CPU profile of a third gateway on Redis under the c=50 load (a profiled process is slower, so
  // the table's figures come from the unprofiled one): top functions by self time, per-step budget.
  const profileFile = path.join(tmp, 'gateway.cpuprofile');
  const profiled = await startGateway({
    BACKEND_URL: backend.url, KEYS_FILE: keys1, REDIS_URL: redisServer.url, KEY_STORE: 'redis',
    NODE_OPTIONS: `${SHIPPED_NODE_OPTIONS} --require ${path.join(ROOT, 'bench/peers/cpu-profile.js')}`, CPU_PROFILE_FILE: profileFile,
  });
  const profiledUrl = `${profiled.proc.url}/v1/properties?${PAGE}&cursor=${await firstCursorAt(profiled.proc.url, 2)}`;
  await drive(profiledUrl, 50, profiled.proc.child.pid, SECONDS);
  running.splice(running.indexOf(profiled.proc), 1);
  await profiled.proc.stop(); // the profile is written on SIGTERM
  if (!existsSync(profileFile)) throw new Error(`the profiled gateway wrote no profile to ${profileFile}`);
  const profile = summariseProfile(profileFile);
  const redis50 = rows.find((r) => r.config.startsWith('gateway, Redis') && r.concurrency === 50)!;
  const profileMarkdown = `# CPU profile: gateway, Redis counters + Redis key store, c=50\n\n${renderProfile(profile, redis50.cpuUs!)}`;
  process.stdout.write(`  profile: ${profile.top.slice(0, 5).map((t) => `${t.name} ${(t.share * 100).toFixed(1)} %`).join(', ')}\n`);

  // Page depth: page 2 and page 1,000 of one country (both carry a cursor), through the gateway; a
  // 5-listing page, so that 1,000 pages exist.
  const DEPTH_QUERY = 'country=GB&limit=5';
  const depthCursor = await firstCursorAt(embedded.proc.url, 2, DEPTH_QUERY);
  const deep = await firstCursorAt(embedded.proc.url, 1000, DEPTH_QUERY);
  const pid = embedded.proc.child.pid!;
  const [page1, page2, page1000] = await alternate(
    [
      { name: 'page 1', url: `${embedded.proc.url}/v1/properties?${DEPTH_QUERY}`, pid },
      { name: 'page 2', url: `${embedded.proc.url}/v1/properties?${DEPTH_QUERY}&cursor=${depthCursor}`, pid },
      { name: 'page 1000', url: `${embedded.proc.url}/v1/properties?${DEPTH_QUERY}&cursor=${deep}`, pid },
    ],
    10,
  );
  const depth = { page1: page1!, page2: page2!, page1000: page1000! };
  process.stdout.write(`  page depth (c=10): page 1 ${depth.page1.rps.toFixed(0)} req/s, page 2 ${depth.page2.rps.toFixed(0)} req/s, page 1,000 ${depth.page1000.rps.toFixed(0)} req/s; CPU µs/req ${depth.page2.cpuUs!.toFixed(0)} vs ${depth.page1000.cpuUs!.toFixed(0)}\n`);

  // Key-store scale: 100,000 keys in the YAML file, and 100,000 keys in Redis (the store meant for
  // large key sets). First page at c=10, requests spread over 1,000 of the keys, against one key.
  // Every gateway compared here is fresh and warmed up alike (3 s): a long-running one is warmer.
  const SCALE_KEYS = 100_000;
  const SCALE_WARM_UP_SECONDS = 3;
  const spread = Array.from({ length: 1000 }, (_, i) => fillerValue(Math.floor((i * SCALE_KEYS) / 1000)));
  const firstPage = `/v1/properties?${PAGE}`;
  const measureFresh = async (env: Record<string, string>, keyValues: readonly string[]): Promise<{ startMs: number; measure: Measure }> => {
    const gateway = await startGateway({ BACKEND_URL: backend.url, ...env });
    const measure = await drive(`${gateway.proc.url}${firstPage}`, 10, gateway.proc.child.pid, SECONDS, keyValues, SCALE_WARM_UP_SECONDS);
    await gateway.proc.stop();
    return { startMs: gateway.startMs, measure };
  };
  const keysBig = keysFile(SCALE_KEYS);
  await fillRedisKeys(redis, SCALE_KEYS);
  const redisStore = { KEYS_FILE: keys1, REDIS_URL: redisServer.url, KEY_STORE: 'redis' };
  const scale = {
    keys: SCALE_KEYS,
    oneKey: await measureFresh({ KEYS_FILE: keys1 }, [KEY_VALUE]),
    file: await measureFresh({ KEYS_FILE: keysBig }, spread),
    // In Redis the store's size costs the gateway nothing (records are read when first used); what
    // could cost is many keys in use at once, so one key is compared with 1,000 over the same store.
    redisOneKey: await measureFresh(redisStore, [KEY_VALUE]),
    redis: await measureFresh(redisStore, spread),
  };
  const [fileMeasure, redisMeasure] = [scale.file.measure, scale.redis.measure];
  process.stdout.write(`  ${SCALE_KEYS} keys, first page c=10 over 1,000 keys: file store start-up ${scale.file.startMs} ms, ${fileMeasure.cpuUs!.toFixed(0)} µs CPU/req, RSS ${fileMeasure.rssMb!.toFixed(0)} MB; ` +
    `Redis store start-up ${scale.redis.startMs} ms, ${redisMeasure.cpuUs!.toFixed(0)} µs CPU/req, RSS ${redisMeasure.rssMb!.toFixed(0)} MB; ` +
    `one key: file ${scale.oneKey.measure.cpuUs!.toFixed(0)}, Redis ${scale.redisOneKey.measure.cpuUs!.toFixed(0)} µs CPU/req\n`);

  // The levers of the performance issue, each measured before/after in this same run.
  const idle = running.filter((p) => p !== backend);
  running.splice(0, running.length, backend);
  await Promise.all(idle.map((p) => p.stop())); // the gateways and the baseline off: the levers run alone
  const levers = await runLevers({ redisUrl: redisServer.url, backendUrl: backend.url, seconds: SECONDS, bigKeysFile: keysBig });
  const workers = await runWorkers({ redisUrl: redisServer.url, backendUrl: backend.url, seconds: SECONDS });
  // Two processes on one port with reusePort against the cluster module's distribution (bench/reuse-port.ts).
  const reusePort = await runReusePort({ redisUrl: redisServer.url, backendUrl: backend.url, rounds: SECONDS });
  // Compression per coding and tracing off / ratio 0.01 / ratio 1.0 (bench/edges.ts).
  const edges = await runEdges({ backendUrl: backend.url, seconds: SECONDS });
  // /v1 with the holders' portal on and off, embedded and on Redis (bench/portal.ts).
  const portal = await runPortal({ redisUrl: redisServer.url, backendUrl: backend.url, seconds: SECONDS });
  // /v1 with the providers' listener (and Stripe) on and off, on Redis (bench/hooks.ts).
  const hooks = await runHooks({ redisUrl: redisServer.url, backendUrl: backend.url, seconds: SECONDS });

  // The cost curves (bench/curves.ts): concurrency, addresses per key, keys in Redis, memory, idle connections, surfaces.
  const baselineForCurves = quiet(await startNodeScript(path.join(ROOT, 'bench/baseline-proxy.js'), { TARGET_URL: backend.url }));
  const curves = await runCurves({ backendUrl: backend.url, redisUrl: redisServer.url, baselineUrl: baselineForCurves.url, baselinePid: baselineForCurves.child.pid!, redis });
  writeCurves(curves);

  const results = { date: new Date().toISOString(), seconds: SECONDS, node: process.version, pageBytes: pageBytes.length, rows, latencies, depth, scale, profile, levers, workers, reusePort, edges, portal, hooks };
  const dir = path.join(ROOT, 'bench/results');
  writeFileSync(path.join(dir, 'latest.json'), `${JSON.stringify(results, null, 2)}\n`);
  const markdown = `${renderMarkdown(results)}\n## Levers (before → after, same run)\n\n${renderLevers(levers)}\n## GATEWAY_WORKERS 2 against 1\n\n${renderWorkers(workers)}\n## reusePort against the cluster module\n\n${renderReusePort(reusePort)}\n## Compression and tracing\n\n${renderEdges(edges)}\n## /v1 with the portal on and off\n\n${renderPortal(portal)}\n## /v1 with the providers' listener on and off\n\n${renderHooks(hooks)}\n## Cost curves\n\n${renderCurves(curves)}`;
  writeFileSync(path.join(dir, 'latest.md'), markdown);
  writeFileSync(path.join(dir, 'latest.svg'), renderChart(rows));
  writeFileSync(path.join(dir, 'profile.md'), profileMarkdown);
  process.stdout.write(`\n${markdown}\n${profileMarkdown}\nwritten: bench/results/latest.{json,md,svg}, bench/results/profile.md\n`);

  redis.disconnect();
  await Promise.all(running.map((p) => p.stop()));
  await redisServer.stop();
}

main().catch(async (err: unknown) => {
  process.stderr.write(`bench failed: ${(err as Error).stack ?? String(err)}\n`);
  await Promise.all(running.map((p) => p.stop().catch(() => undefined)));
  process.exit(1);
});
