/**
 * `npx tsx bench/levers.ts` (after `npm run build`): the levers of the performance issue, each
 * measured before and after in one run on this machine, printed as a Markdown table.
 *
 *   1. calling the data service for a body the gateway reshapes: express 5 + http-proxy-middleware
 *      (responseInterceptor) vs undici's Pool in an express route vs undici's Pool in node:http;
 *      child processes driven by autocannon, c=50 keep-alive, server CPU from /proc;
 *   2. the cursor: jose with the raw key per call vs jose with the key imported once vs the
 *      gateway's codec (node:crypto), in-process;
 *   3. the limits in Redis: three rate-limiter-flexible limiters vs the gateway's one Lua script,
 *      in-process against a real redis-server;
 *   4. logging: pino-http (defaults, and configured to write the gateway's line) vs the gateway's
 *      hand-written line in pino-http's shape (asynchronous destination) vs the same line on a
 *      synchronous destination or with ISO 8601 times; child processes, stdout on /dev/null,
 *      autocannon, CPU from /proc.
 *
 * Run directly, it starts the data service and a redis-server itself and stops them at the end.
 * `runLevers` is for bench/run.ts, which has both running already. BENCH_SECONDS (default 5) sets
 * how long each variant is measured, after a 1 s warm-up each; the variants of a lever take turns
 * in 1 s rounds and each reports its median round, because this 2-core machine is shared and a
 * burst of other work must not land on one side of a comparison only. Whole run: about 75 s.
 */
import autocannon from 'autocannon';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { createSecretKey, randomBytes, type KeyObject } from 'node:crypto';
import { closeSync, existsSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Redis from 'ioredis';
import { EncryptJWT, jwtDecrypt } from 'jose';
import pino from 'pino';
import { RateLimiterRedis } from 'rate-limiter-flexible';
import type { Limits } from '../gateway/config/gateway-config';
import { createCursorCodec, cursorKeyId, filtersHash, type CursorFilters } from '../gateway/cursor/cursor-codec';
import { createRedisCounters } from '../gateway/limits/redis-counters';
import { singleRedis } from '../gateway/config/redis-env';
import { parseAnswer } from '../gateway/upstream/json-caller';
import { checkPageBytes } from '../gateway/upstream/page-bytes';
import { passThroughItems } from '../gateway/upstream/page-json';
import { connectRedis, whenReady } from '../gateway/redis/connect';
import { ROOT, startProcess, type RunningProcess } from '../test/kit/processes';
import { startRedis } from '../test/kit/redis-server';

export interface LeverResult {
  lever: string;
  before: { label: string; value: number };
  after: { label: string; value: number };
  /** Unit of both values: `µs …` (lower is better) or `req/s`, `decisions/s` (higher is better). */
  unit: string;
  /** after ÷ before: below 1 is a saving for a cost, above 1 a gain for a rate. */
  ratio: number;
  /** How it was measured, and what else the run showed (e.g. a third variant). */
  note?: string;
}

export interface LeverOptions {
  redisUrl: string;
  backendUrl: string;
  /** A keys file of many keys (the key-store scale test's), for the keys-file lever; none: lever skipped. */
  bigKeysFile?: string;
  /** Measured seconds per variant (in 1 s rounds), after a 1 s warm-up each. */
  seconds: number;
}

const CONCURRENCY = 50;
const WARM_UP_SECONDS = 1;
/** The data service's page the upstream lever fetches (~2 KB, as in bench/run.ts). */
const PAGE_PATH = '/internal/v1/listings?country=GB&limit=5';
const LEVER_DIR = path.join(ROOT, 'bench', 'levers');

const result = (lever: string, unit: string, before: [string, number], after: [string, number], note?: string): LeverResult => ({
  lever,
  before: { label: before[0], value: before[1] },
  after: { label: after[0], value: after[1] },
  unit,
  ratio: after[1] / before[1],
  ...(note ? { note } : {}),
});

const progress = (line: string): void => {
  process.stdout.write(`  ${line}\n`);
};

// ---------------------------------------------------------------------------------------------
// Child servers (levers 1 and 4)

interface LeverServer {
  url: string;
  pid: number;
  stop(): Promise<void>;
}

/**
 * Starts `node bench/levers/<file>` with its stdout on `stdoutPath` (/dev/null unless a test run
 * wants to read the log) and waits for the "listening" line it writes to stderr. Not
 * test/kit's startNodeScript: that one pipes stdout to this process, and reading a logging
 * server's lines would cost this process CPU and the server pipe writes instead of /dev/null writes.
 */
function startServer(file: string, env: Record<string, string>, stdoutPath = '/dev/null'): Promise<LeverServer> {
  const out = openSync(stdoutPath, 'w');
  let child: ChildProcess;
  try {
    child = spawn(process.execPath, [path.join(LEVER_DIR, file)], { cwd: ROOT, env: { PATH: process.env.PATH ?? '', ...env }, stdio: ['ignore', out, 'pipe'] });
  } finally {
    closeSync(out); // the child has its own copy
  }
  const stderr: string[] = [];
  let listening = false;
  const closed = new Promise<void>((resolve) => child.once('close', () => resolve()));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${file} did not start:\n${stderr.join('')}`));
    }, 15_000);
    child.once('error', reject);
    void closed.then(() => {
      clearTimeout(timer);
      reject(new Error(`${file} exited before listening:\n${stderr.join('')}`));
    });
    child.stderr!.setEncoding('utf8');
    child.stderr!.on('data', (chunk: string) => {
      stderr.push(chunk);
      if (stderr.length > 50) stderr.shift(); // the tail is enough to explain a failure
      if (listening) return;
      const port = /"msg":"listening","port":(\d+)/.exec(stderr.join(''))?.[1];
      if (port === undefined) return;
      listening = true;
      clearTimeout(timer);
      resolve({
        url: `http://127.0.0.1:${port}`,
        pid: child.pid!,
        stop: async () => {
          if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
          const killer = setTimeout(() => child.kill('SIGKILL'), 5000);
          await closed;
          clearTimeout(killer);
        },
      });
    });
  });
}

/** CPU seconds (user + system) a process has used so far, from /proc (clock ticks, 100 Hz). */
function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

interface Driven {
  rps: number;
  cpuUs: number;
}

const median = (values: readonly number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

/** One autocannon run on keep-alive connections, and the server's CPU per request over it. */
async function round(url: string, pid: number, seconds: number, connections = CONCURRENCY): Promise<Driven> {
  const before = cpuSeconds(pid);
  const run = await autocannon({ url, connections, duration: seconds });
  const cpu = cpuSeconds(pid) - before;
  // A benchmark of failures would measure the wrong thing: every answer must be a 2xx.
  if (run.requests.total === 0 || run.non2xx > 0 || run.errors > 0 || run.timeouts > 0) {
    throw new Error(`${url}: ${run.requests.total} requests, ${run.non2xx} non-2xx, ${run.errors} errors, ${run.timeouts} timeouts`);
  }
  return { rps: run.requests.total / seconds, cpuUs: (cpu * 1e6) / run.requests.total };
}

interface ServerVariant {
  name: string;
  file: string;
  env: Record<string, string>;
}

/**
 * The variants of one lever side by side: all started, each warmed up for 1 s (JIT, pools,
 * connections), then `seconds` rounds of 1 s alternating between them, so each gets `seconds` of
 * measured load; the median round of each. One after another, a burst of other work on this
 * 2-core machine landed on one variant only and flipped a comparison between two runs; alternating
 * spreads it over all of them, and the median drops the round it hit hardest.
 */
async function compareServers(variants: readonly ServerVariant[], urlPath: string, seconds: number, started: LeverServer[], connections = CONCURRENCY): Promise<Driven[]> {
  const servers: LeverServer[] = [];
  for (const v of variants) {
    const server = await startServer(v.file, v.env);
    started.push(server);
    servers.push(server);
  }
  for (const server of servers) await autocannon({ url: `${server.url}${urlPath}`, connections, duration: WARM_UP_SECONDS });
  const count = Math.max(1, Math.round(seconds));
  const rounds = servers.map((): Driven[] => []);
  for (let r = 0; r < count; r++) {
    for (const [i, server] of servers.entries()) rounds[i]!.push(await round(`${server.url}${urlPath}`, server.pid, seconds / count, connections));
  }
  await Promise.all(servers.map((s) => s.stop()));
  return rounds.map((list) => ({ rps: median(list.map((d) => d.rps)), cpuUs: median(list.map((d) => d.cpuUs)) }));
}

const sideBySide = (seconds: number): string =>
  `all variants running, 1 s warm-up each, then ${Math.max(1, Math.round(seconds))} alternating 1 s rounds per variant, median round`;

// ---------------------------------------------------------------------------------------------
// Lever 1: the upstream call for a body the gateway reshapes

async function upstreamLever(backendUrl: string, seconds: number, started: LeverServer[]): Promise<LeverResult[]> {
  const variants = [
    { name: 'express 5 + http-proxy-middleware', file: 'upstream-hpm.js', env: { TARGET_URL: backendUrl } },
    { name: 'express 5 + undici Pool', file: 'upstream-express-undici.js', env: { TARGET_URL: backendUrl } },
    { name: 'node:http + undici Pool', file: 'upstream-undici.js', env: { TARGET_URL: backendUrl } },
  ];
  // Each variant must really reshape the page before its cost means anything.
  for (const v of variants) {
    const server = await startServer(v.file, v.env);
    started.push(server);
    const body = (await (await fetch(`${server.url}${PAGE_PATH}`)).json()) as { data?: unknown[]; next_cursor?: unknown; items?: unknown };
    await server.stop();
    if (!Array.isArray(body.data) || body.data.length !== 5 || typeof body.next_cursor !== 'string' || 'items' in body) {
      throw new Error(`${v.file} did not answer the reshaped page: ${JSON.stringify(body).slice(0, 200)}`);
    }
  }
  const measured = await compareServers(variants, PAGE_PATH, seconds, started);
  measured.forEach((m, i) => progress(`upstream: ${variants[i]!.name.padEnd(36)} ${m.cpuUs.toFixed(0).padStart(5)} µs CPU/req  ${m.rps.toFixed(0).padStart(6)} req/s`));
  const [hpm, expressUndici, bare] = variants.map((v, i) => [v.name, measured[i]!] as const) as [readonly [string, Driven], readonly [string, Driven], readonly [string, Driven]];
  const over = (hpm[1].cpuUs / expressUndici[1].cpuUs - 1) * 100;
  const how = `server process CPU (utime+stime from /proc) per request, autocannon c=${CONCURRENCY} keep-alive; ${sideBySide(seconds)}; the data service's ${PAGE_PATH} reshaped to {data, next_cursor}`;
  return [
    result('Upstream call, reshaped page', 'µs CPU/req', [hpm[0], hpm[1].cpuUs], [expressUndici[0], expressUndici[1].cpuUs],
      `${how}. http-proxy-middleware costs ${over >= 0 ? '+' : ''}${over.toFixed(0)} % CPU/req vs undici in the express route (the issue keeps it only within 10 %)`),
    result('Upstream call, reshaped page', 'req/s', [hpm[0], hpm[1].rps], [expressUndici[0], expressUndici[1].rps]),
    result('Upstream call: express 5 framework cost', 'µs CPU/req', [expressUndici[0], expressUndici[1].cpuUs], [bare[0], bare[1].cpuUs],
      `the same undici call with and without express (${(expressUndici[1].cpuUs - bare[1].cpuUs).toFixed(0)} µs/req of framework)`),
    result('Upstream call: express 5 framework cost', 'req/s', [expressUndici[0], expressUndici[1].rps], [bare[0], bare[1].rps]),
    ...(await answerHandlingLever(backendUrl, seconds, started)),
  ];
}

/**
 * How the data service's answer is read: undici's `request()` + `body.arrayBuffer()` (the gateway's
 * caller until now) against the gateway's caller as it is (`dispatch` with its own handler). Both
 * pass the page's bytes through unchanged, so only the answer handling differs.
 */
async function answerHandlingLever(backendUrl: string, seconds: number, started: LeverServer[]): Promise<LeverResult[]> {
  const variants = [
    { name: 'undici request() + body.arrayBuffer()', file: 'upstream-request-bytes.js', env: { TARGET_URL: backendUrl } },
    { name: 'gateway caller: dispatch + own handler', file: 'upstream-gateway-caller.js', env: { TARGET_URL: backendUrl } },
  ];
  const expected = await (await fetch(`${backendUrl}${PAGE_PATH}`)).text();
  for (const v of variants) {
    const server = await startServer(v.file, v.env);
    started.push(server);
    const text = await (await fetch(`${server.url}${PAGE_PATH}`)).text();
    await server.stop();
    if (text !== expected) throw new Error(`${v.file} did not pass the page through: ${text.slice(0, 200)}`);
  }
  const measured = await compareServers(variants, PAGE_PATH, seconds, started);
  measured.forEach((m, i) => progress(`upstream: ${variants[i]!.name.padEnd(36)} ${m.cpuUs.toFixed(0).padStart(5)} µs CPU/req  ${m.rps.toFixed(0).padStart(6)} req/s`));
  const how = `server process CPU per request, autocannon c=${CONCURRENCY} keep-alive; ${sideBySide(seconds)}; the data service's ${PAGE_PATH} passed through as bytes`;
  return [
    result('Upstream call: answer handling', 'µs CPU/req', [variants[0]!.name, measured[0]!.cpuUs], [variants[1]!.name, measured[1]!.cpuUs], how),
    result('Upstream call: answer handling', 'req/s', [variants[0]!.name, measured[0]!.rps], [variants[1]!.name, measured[1]!.rps]),
  ];
}

// ---------------------------------------------------------------------------------------------
// Lever 2: the cursor (decrypt the incoming one, encrypt the next), in-process

const CURSOR_ROUNDS = 5;
const CURSOR_PER_ROUND = 4000; // 20,000 measured pairs per variant
const CURSOR_WARM_UP = 5000;

/**
 * µs per decrypt+encrypt pair of each variant. Every variant is warmed up first and the measured
 * rounds alternate between them: measured one after another, whichever ran first was ~1.7× slower
 * (V8 still tiering up the shared crypto and JSON paths), which made jose with the raw key look
 * faster than jose with the key imported once. The median round of each: one round disturbed by
 * another benchmark on this 2-core machine does not move the figure.
 */
async function timePairs(variants: ReadonlyArray<() => unknown>): Promise<number[]> {
  for (const pair of variants) for (let i = 0; i < CURSOR_WARM_UP; i++) await pair();
  const rounds = variants.map((): number[] => []);
  for (let r = 0; r < CURSOR_ROUNDS; r++) {
    for (const [v, pair] of variants.entries()) {
      const started = process.hrtime.bigint();
      for (let i = 0; i < CURSOR_PER_ROUND; i++) await pair();
      rounds[v]!.push(Number(process.hrtime.bigint() - started) / 1e3 / CURSOR_PER_ROUND);
    }
  }
  return rounds.map(median);
}

async function cursorLever(position: string): Promise<LeverResult[]> {
  const secret = randomBytes(32);
  const secretText = secret.toString('base64url');
  const kid = cursorKeyId(secretText);
  const keyId = 'lever-key';
  const filters: CursorFilters = { country: 'GB', listingType: 'sale' };
  const f = filtersHash(filters);
  const ttlSeconds = 3600;
  // The same claims the gateway's codec encrypts, so the tokens are the same size.
  const joseIssue = (key: Uint8Array | KeyObject): Promise<string> =>
    new EncryptJWT({ k: keyId, f, p: position })
      .setProtectedHeader({ alg: 'dir', enc: 'A256GCM', kid })
      .setExpirationTime(Math.floor(Date.now() / 1000) + ttlSeconds)
      .encrypt(key);
  const joseOpen = async (token: string, key: Uint8Array | KeyObject): Promise<void> => {
    const { payload } = await jwtDecrypt(token, key, { keyManagementAlgorithms: ['dir'], contentEncryptionAlgorithms: ['A256GCM'] });
    if (payload.k !== keyId || payload.f !== f || payload.p !== position) throw new Error('jose cursor did not round-trip');
  };
  /** Decrypt the incoming cursor, encrypt the next one: what a page with a cursor costs. */
  const josePairs = async (key: Uint8Array | KeyObject): Promise<() => Promise<void>> => {
    let token = await joseIssue(key);
    return async () => {
      await joseOpen(token, key);
      token = await joseIssue(key);
    };
  };

  // The codec without memory of the cursors it issued (every open decrypts), and as the gateway runs it.
  const codec = createCursorCodec({ encryptionSecret: secretText, ttlSeconds, rememberIssued: 0 });
  let codecToken = codec.issue(keyId, filters, position);
  const remembering = createCursorCodec({ encryptionSecret: secretText, ttlSeconds });
  let rememberedToken = remembering.issue(keyId, filters, position);
  const [raw, once, gateway, remembered] = await timePairs([
    await josePairs(secret), // raw key bytes on every call: jose turns them into a key each time
    await josePairs(createSecretKey(secret)), // imported once
    // Synchronous, but timed through the same awaited loop as jose so the loop costs the same.
    () => {
      const opened = codec.open(codecToken, keyId, filters);
      if (opened.kind !== 'valid' || opened.position !== position) throw new Error('codec cursor did not round-trip');
      codecToken = codec.issue(keyId, filters, position);
    },
    () => {
      const opened = remembering.open(rememberedToken, keyId, filters);
      if (opened.kind !== 'valid' || opened.position !== position) throw new Error('remembering codec cursor did not round-trip');
      rememberedToken = remembering.issue(keyId, filters, position);
    },
  ]) as [number, number, number, number];
  progress(`cursor: jose, raw key per call          ${raw.toFixed(1).padStart(6)} µs per decrypt+encrypt`);
  progress(`cursor: jose, key imported once         ${once.toFixed(1).padStart(6)} µs per decrypt+encrypt`);
  progress(`cursor: gateway codec (node:crypto)     ${gateway.toFixed(1).padStart(6)} µs per decrypt+encrypt`);
  progress(`cursor: codec, issued cursors remembered ${remembered.toFixed(1).padStart(5)} µs per open+encrypt`);

  const how = `in-process, wall time per decrypt+encrypt pair (dir + A256GCM, the codec's claims); all variants warmed up (${CURSOR_WARM_UP.toLocaleString('en')} pairs), then ${CURSOR_ROUNDS} alternating rounds of ${CURSOR_PER_ROUND.toLocaleString('en')}, median round`;
  return [
    result('Cursor: key imported once', 'µs/pair', ['jose, raw key bytes per call', raw], ['jose, createSecretKey once', once], how),
    result('Cursor: gateway codec', 'µs/pair', ['jose, createSecretKey once', once], ['gateway codec (node:crypto, sync)', gateway],
      `same measurement; jose with the raw key per call → codec: ${(gateway / raw).toFixed(2)}×`),
    result('Cursor: the cursors this process issued remembered', 'µs/pair', ['codec, every cursor decrypted', gateway], ['codec, an issued cursor opened from a bounded LRU (4,096)', remembered],
      'same measurement; each pair opens the cursor the previous pair issued, as a walk does (a cursor from another process, or one that left the LRU, still costs the decryption)'),
  ];
}

// ---------------------------------------------------------------------------------------------
// Lever 3: the three limit windows in Redis

type Decision = (keyId: string) => Promise<unknown>;

/** The server's own CPU seconds (INFO cpu): what the decisions cost Redis, not this process. */
async function redisCpuSeconds(redis: Redis): Promise<number> {
  const info = await redis.info('cpu');
  const field = (name: string): number => Number(new RegExp(`^${name}:([\\d.]+)`, 'm').exec(info)?.[1] ?? NaN);
  return field('used_cpu_user') + field('used_cpu_sys');
}

interface LimitRound {
  /** Wall µs per decision: at c=1 the latency a request pays. */
  wallUs: number;
  clientCpuUs: number;
  redisCpuUs: number;
  perSecond: number;
}

/**
 * Decisions with `concurrency` of them in flight for `ms`, each loop awaiting its previous one.
 * Distinct key ids (1,000 per variant, never shared between variants) so every decision is a
 * normal "allowed" on a counter that exists, as for a gateway with many active keys.
 */
function decisionLoop(decide: Decision, prefix: string): (concurrency: number, ms: number) => Promise<number> {
  let n = 0;
  return async (concurrency, ms) => {
    const until = Date.now() + ms;
    const loop = async (): Promise<number> => {
      let count = 0;
      while (Date.now() < until) {
        await decide(`${prefix}-${n++ % 1000}`);
        count++;
      }
      return count;
    };
    return (await Promise.all(Array.from({ length: concurrency }, loop))).reduce((a, b) => a + b, 0);
  };
}

/**
 * Both variants at `concurrency`: a 1 s warm-up each, then `seconds` rounds of 1 s alternating
 * between them (a burst of other load on this 2-core machine then hits both, not only one), each
 * round timed, this process's CPU (process.cpuUsage) and Redis's (INFO cpu) per decision; the
 * median round of each variant.
 */
async function measureLimits(variants: ReadonlyArray<ReturnType<typeof decisionLoop>>, concurrency: number, seconds: number, admin: Redis): Promise<LimitRound[]> {
  for (const run of variants) await run(concurrency, WARM_UP_SECONDS * 1000);
  const rounds = variants.map((): LimitRound[] => []);
  const count = Math.max(1, Math.round(seconds));
  for (let r = 0; r < count; r++) {
    for (const [v, run] of variants.entries()) {
      const redisBefore = await redisCpuSeconds(admin);
      const cpuBefore = process.cpuUsage();
      const started = process.hrtime.bigint();
      const total = await run(concurrency, (seconds / count) * 1000);
      const wallUs = Number(process.hrtime.bigint() - started) / 1e3;
      const cpu = process.cpuUsage(cpuBefore);
      const redisCpu = (await redisCpuSeconds(admin)) - redisBefore;
      rounds[v]!.push({ wallUs: (wallUs * concurrency) / total, clientCpuUs: (cpu.user + cpu.system) / total, redisCpuUs: (redisCpu * 1e6) / total, perSecond: (total * 1e6) / wallUs });
    }
  }
  return rounds.map((list) => ({
    wallUs: median(list.map((x) => x.wallUs)),
    clientCpuUs: median(list.map((x) => x.clientCpuUs)),
    redisCpuUs: median(list.map((x) => x.redisCpuUs)),
    perSecond: median(list.map((x) => x.perSecond)),
  }));
}

async function limitsLever(redisUrl: string, seconds: number): Promise<LeverResult[]> {
  const silent = pino({ level: 'silent' });
  const admin = new Redis(redisUrl);
  const clients: Redis[] = [];
  const run = randomBytes(4).toString('hex');
  // The gateway's own client settings (auto-pipelining, no offline queue) for both sides, one
  // client each, so only the way of counting differs. A longer command timeout than production's
  // 500 ms: a stalled command on a busy 2-core machine must slow the figure, not abort the benchmark.
  const connect = async (): Promise<Redis> => {
    const client = connectRedis(singleRedis(redisUrl, 5000), silent, 'lever') as Redis;
    clients.push(client);
    if (!(await whenReady(client, 5000))) throw new Error(`redis at ${redisUrl} not ready`);
    return client;
  };
  const big = 1_000_000_000;

  try {
    // Before: the naive stack, one limiter per window, consumed one after another (each its own
    // script round trip). Rolling windows rather than calendar ones: the cost is what is compared.
    const naiveClient = await connect();
    const windows = [
      { name: 'minute', duration: 60 },
      { name: 'day', duration: 86_400 },
      { name: 'month', duration: 31 * 86_400 },
    ];
    const limiters = windows.map((w) => new RateLimiterRedis({ storeClient: naiveClient, keyPrefix: `lever:${run}:rlf:${w.name}`, points: big, duration: w.duration }));
    const naive = decisionLoop(async (id) => {
      for (const limiter of limiters) await limiter.consume(id);
    }, `rlf-${run}`);

    // After: the gateway's counters, all three windows checked and counted by one Lua script.
    const counters = createRedisCounters(await connect());
    const limits: Limits = { perMinute: big, perDay: big, perMonth: big };
    const lua = decisionLoop(async (id) => {
      const decision = await counters.consume(id, limits);
      if (decision.kind !== 'allowed') throw new Error(`limit decision ${decision.kind}`);
    }, `lua-${run}`);

    const [naive1, lua1] = (await measureLimits([naive, lua], 1, seconds, admin)) as [LimitRound, LimitRound];
    const [naive50, lua50] = (await measureLimits([naive, lua], CONCURRENCY, seconds, admin)) as [LimitRound, LimitRound];
    for (const [name, one, many] of [['3 × RateLimiterRedis', naive1, naive50], ['gateway, one Lua script', lua1, lua50]] as const) {
      progress(`limits: ${name.padEnd(24)} ${one.wallUs.toFixed(0).padStart(5)} µs/decision c=1; c=${CONCURRENCY}: ${many.clientCpuUs.toFixed(1)} µs client CPU + ${many.redisCpuUs.toFixed(1)} µs Redis CPU per decision, ${many.perSecond.toFixed(0)}/s`);
    }

    const before = '3 × rate-limiter-flexible consume';
    const after = 'gateway: one Lua script';
    const how = `in-process, real redis-server, ioredis with the gateway's settings (auto-pipelining); distinct key ids, limits 1e9; 1 s warm-up each, then ${Math.max(1, Math.round(seconds))} alternating 1 s rounds per variant, median round`;
    return [
      result('Limits: latency per decision, c=1', 'µs/decision', [before, naive1.wallUs], [after, lua1.wallUs], how),
      result(`Limits: client CPU per decision, c=${CONCURRENCY}`, 'µs CPU/decision', [before, naive50.clientCpuUs], [after, lua50.clientCpuUs], 'process.cpuUsage() of this process'),
      result(`Limits: Redis CPU per decision, c=${CONCURRENCY}`, 'µs CPU/decision', [before, naive50.redisCpuUs], [after, lua50.redisCpuUs], "redis-server's INFO cpu (used_cpu_user + used_cpu_sys)"),
      result(`Limits: throughput, c=${CONCURRENCY}`, 'decisions/s', [before, naive50.perSecond], [after, lua50.perSecond]),
    ];
  } finally {
    // The counters of this run expire on their own; the run-unique prefix keeps them apart meanwhile.
    for (const client of clients) client.disconnect();
    admin.disconnect();
  }
}

// ---------------------------------------------------------------------------------------------
// Lever 5: the page, bytes in, bytes out (in-process)

const PAGE_ROUNDS = 5;
const PAGE_PER_ROUND = 2000;

/**
 * What the gateway does with one page of the data service (20 listings, ~7.9 KB), in-process, µs per
 * page: before, the {items, next_after} form decoded, parsed and checked, its items text cut out and
 * encoded again for the answer (the classic path, still used for stores that do not speak the new
 * format); after, the public-array bytes checked in one pass and passed on as they are.
 */
async function pageLever(backendUrl: string): Promise<LeverResult[]> {
  const pagePath = '/internal/v1/listings?country=GB&limit=20';
  const classic = Buffer.from(await (await fetch(`${backendUrl}${pagePath}`)).arrayBuffer());
  const bytes = Buffer.from(await (await fetch(`${backendUrl}${pagePath}`, { headers: { 'x-page-format': 'public-array' } })).arrayBuffer());
  const before = (): unknown => {
    const answer = parseAnswer(200, classic.toString('utf8'));
    if ('kind' in answer) throw new Error('classic page unreadable');
    const raw = passThroughItems(answer.text, answer.body as { items: unknown[]; next_after: string | null });
    if (raw === undefined) throw new Error('classic page not passed through');
    return Buffer.from(raw);
  };
  const after = (): unknown => {
    if (checkPageBytes(bytes) !== 'clean') throw new Error('public-array page not clean');
    return bytes;
  };
  for (const f of [before, after]) for (let i = 0; i < PAGE_PER_ROUND; i++) f();
  const rounds: number[][] = [[], []];
  for (let r = 0; r < PAGE_ROUNDS; r++) {
    for (const [v, f] of [before, after].entries()) {
      const started = process.hrtime.bigint();
      for (let i = 0; i < PAGE_PER_ROUND; i++) f();
      rounds[v]!.push(Number(process.hrtime.bigint() - started) / 1e3 / PAGE_PER_ROUND);
    }
  }
  const [b, a] = rounds.map(median) as [number, number];
  progress(`page: decode + parse + cut + encode  ${b.toFixed(1).padStart(6)} µs per page (${classic.length} bytes)`);
  progress(`page: byte check, bytes through      ${a.toFixed(1).padStart(6)} µs per page (${bytes.length} bytes)`);
  return [
    result('Page handling, 20 listings', 'µs/page', ['decode, JSON.parse, cut the items text, encode', b], ['public-array: one byte check, bytes through', a],
      `in-process, the same page in both forms from the data service; both warmed up (${PAGE_PER_ROUND.toLocaleString('en')} pages), then ${PAGE_ROUNDS} alternating rounds of ${PAGE_PER_ROUND.toLocaleString('en')}, median round. Before also paid writing the answer as a string (encoded again on the socket)`),
  ];
}

// ---------------------------------------------------------------------------------------------
// Lever 7: the answer's head and body on the socket (child processes)

async function answerWritesLever(backendUrl: string, seconds: number, started: LeverServer[]): Promise<LeverResult[]> {
  const dir = mkdtempSync(path.join(tmpdir(), 'lever-writes-'));
  try {
    const pageFile = path.join(dir, 'page.json');
    writeFileSync(pageFile, Buffer.from(await (await fetch(`${backendUrl}/internal/v1/listings?country=GB&limit=20`, { headers: { 'x-page-format': 'public-array' } })).arrayBuffer()));
    const modes = [
      { mode: 'writev', name: 'setHeader, end(buffer): head + body in one writev' },
      { mode: 'one-write', name: 'setHeader, end(latin1 string): one write' },
      { mode: 'writehead', name: 'writeHead(array), end(buffer)' },
    ];
    const expected = readFileSync(pageFile);
    for (const m of modes) {
      const server = await startServer('answer-writes.js', { MODE: m.mode, PAGE_FILE: pageFile });
      started.push(server);
      const got = Buffer.from(await (await fetch(server.url)).arrayBuffer());
      await server.stop();
      if (!got.equals(expected)) throw new Error(`answer-writes ${m.mode} changed the body`);
    }
    const rows: Array<[string, Driven[]]> = [];
    for (const c of [10, CONCURRENCY]) {
      const measured = await compareServers(modes.map((m) => ({ name: m.name, file: 'answer-writes.js', env: { MODE: m.mode, PAGE_FILE: pageFile } })), '/', seconds, started, c);
      measured.forEach((d, i) => progress(`answer writes c=${c}: ${modes[i]!.name.padEnd(50)} ${d.cpuUs.toFixed(1).padStart(6)} µs CPU/req  ${d.rps.toFixed(0).padStart(6)} req/s`));
      rows.push([`c=${c}`, measured]);
    }
    const how = `a node:http server answering the same ${expected.length}-byte page and the gateway's head fields from memory, only the writing differs; server CPU per request from /proc; ${sideBySide(seconds)}`;
    return rows.flatMap(([c, m]) => [
      result(`Answer writes, ${c}`, 'µs CPU/req', [modes[0]!.name, m[0]!.cpuUs], [modes[1]!.name, m[1]!.cpuUs], `${how}; writeHead with an array: ${m[2]!.cpuUs.toFixed(1)} µs`),
    ]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

// ---------------------------------------------------------------------------------------------
// Lever 6: the keys file at scale (child processes)

function keysLever(keysFile: string): LeverResult[] {
  type Load = { keys: number; ms: number; rssMb: number; peakMb: number; readerPeakMb?: number };
  const run = (mode: string): Load =>
    JSON.parse(execFileSync(process.execPath, [path.join(LEVER_DIR, 'keys-load.js')], {
      env: { PATH: process.env.PATH ?? '', MODE: mode, KEYS_FILE: keysFile, GATEWAY_CONFIG: path.join(ROOT, 'config/gateway.yaml') },
      encoding: 'utf8',
    })) as Load;
  // Alternating runs (the machine is shared), the median of each.
  const ROUNDS = 3;
  const threads: Load[] = [];
  const workers: Load[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    threads.push(run('thread'));
    workers.push(run('worker'));
  }
  const median = (runs: Load[], field: keyof Load): number => {
    const values = runs.map((r) => r[field] ?? 0).sort((a, b) => a - b);
    return values[Math.floor(values.length / 2)]!;
  };
  const [thread, worker] = [threads, workers].map((runs) => ({
    keys: runs[0]!.keys, ms: median(runs, 'ms'), rssMb: median(runs, 'rssMb'), peakMb: median(runs, 'peakMb'), readerPeakMb: median(runs, 'readerPeakMb'),
  })) as [Required<Load>, Required<Load>];
  progress(`keys file (${thread.keys} keys): in-thread ${thread.ms} ms, RSS ${thread.rssMb.toFixed(0)} MB (peak ${thread.peakMb.toFixed(0)})`);
  progress(`keys file (${worker.keys} keys): reader process ${worker.ms} ms, RSS ${worker.rssMb.toFixed(0)} MB (peak ${worker.peakMb.toFixed(0)}, reader's peak ${worker.readerPeakMb.toFixed(0)})`);
  const how = `${thread.keys.toLocaleString('en')} keys; a child process loads the file and builds the key store, RSS from /proc 2 s later; median of ${ROUNDS} alternating runs each`;
  const after = 'parsed in a child process, entries handed back packed';
  return [
    result('Keys file at scale: RSS after load', 'MB', ['parsed in the main thread', thread.rssMb], [after, worker.rssMb],
      `${how}; this process's peak (VmHWM) was ${thread.peakMb.toFixed(0)} → ${worker.peakMb.toFixed(0)} MB, the reader process's own peak ${worker.readerPeakMb.toFixed(0)} MB (gone when it exits)`),
    result('Keys file at scale: load time', 'ms', ['parsed in the main thread', thread.ms], [after, worker.ms], how),
  ];
}

// ---------------------------------------------------------------------------------------------
// Lever 4: logging

const LOG_URL = '/v1/properties?country=GB&limit=5&cursor=abc';

/** Proof that a variant really logs: one request with stdout in a file, then count its lines. */
async function logLinesFor(mode: string): Promise<number> {
  const dir = mkdtempSync(path.join(tmpdir(), 'lever-log-'));
  try {
    const file = path.join(dir, 'stdout.log');
    const server = await startServer('logging-server.js', { LOGGING: mode }, file);
    try {
      await (await fetch(`${server.url}${LOG_URL}`)).text();
      await new Promise((resolve) => setTimeout(resolve, 100)); // the 'close' handler logs after the answer
    } finally {
      await server.stop(); // pino flushes its asynchronous destination on exit
    }
    return readFileSync(file, 'utf8').split('\n').filter((line) => line.startsWith('{')).length;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function loggingLever(seconds: number, started: LeverServer[]): Promise<LeverResult[]> {
  if (!existsSync(path.join(ROOT, 'dist', 'gateway', 'logging.js'))) throw new Error('dist/gateway/logging.js is missing: run npm run build first');
  const modes = [
    { mode: 'none', name: 'no logging' },
    { mode: 'pino-http', name: 'pino-http (default options)' },
    { mode: 'pino-http-gw', name: "pino-http writing the gateway's line" },
    { mode: 'sync', name: 'one line, pino sync destination' },
    { mode: 'per-line', name: 'one line, one async write per line' },
    { mode: 'gateway-iso', name: 'one line, ISO 8601 time' },
    { mode: 'gateway', name: 'gateway: one line, batched async writes' },
  ] as const;
  for (const m of modes) {
    const lines = await logLinesFor(m.mode);
    if (lines !== (m.mode === 'none' ? 0 : 1)) throw new Error(`logging server ${m.mode} wrote ${lines} lines for one request`);
  }
  const measured = await compareServers(modes.map((m) => ({ name: m.name, file: 'logging-server.js', env: { LOGGING: m.mode } })), LOG_URL, seconds, started);
  measured.forEach((d, i) => progress(`logging: ${modes[i]!.name.padEnd(38)} ${d.cpuUs.toFixed(1).padStart(6)} µs CPU/req  ${d.rps.toFixed(0).padStart(6)} req/s`));
  // At c=50 this tiny server's lines queue behind the write in flight, batched or not; one caller
  // at a time shows what a line alone costs (a gateway spends ~100 µs per request, so its lines
  // come apart like these).
  const destinations = [modes.find((m) => m.mode === 'per-line')!, modes.find((m) => m.mode === 'gateway')!];
  const alone = await compareServers(destinations.map((m) => ({ name: m.name, file: 'logging-server.js', env: { LOGGING: m.mode } })), LOG_URL, seconds, started, 1);
  alone.forEach((d, i) => progress(`logging c=1: ${destinations[i]!.name.padEnd(34)} ${d.cpuUs.toFixed(1).padStart(6)} µs CPU/req  ${d.rps.toFixed(0).padStart(6)} req/s`));
  const us = (mode: string): number => measured[modes.findIndex((m) => m.mode === mode)]!.cpuUs;
  const name = (mode: string): string => modes.find((m) => m.mode === mode)!.name;
  const share = (mode: string): string => `${us(mode) - us('none') >= 0 ? '+' : ''}${(us(mode) - us('none')).toFixed(1)}`;
  const how = `tiny node:http servers (pino-http with its defaults and configured for the gateway's line, the gateway's hand-written line, the same line on a sync destination, one write per line or with ISO times, and none), the same answer, only the logging differs; stdout on /dev/null; server CPU per request from /proc, autocannon c=${CONCURRENCY}; ${sideBySide(seconds)}. The same server without logging: ${us('none').toFixed(1)} µs/req, so logging adds pino-http ${share('pino-http')} (defaults, headers and all) or ${share('pino-http-gw')} (the gateway's line), gateway ${share('gateway')}, one write per line ${share('per-line')}, sync ${share('sync')}, ISO time ${share('gateway-iso')} µs/req`;
  return [
    result('Logging: per-request line', 'µs CPU/req', [name('pino-http'), us('pino-http')], [name('gateway'), us('gateway')], how),
    result("Logging: the gateway's line, pino-http or by hand", 'µs CPU/req', [name('pino-http-gw'), us('pino-http-gw')], [name('gateway'), us('gateway')],
      'the same line (req/res/responseTime and the gateway fields); pino-http binds each request to a child logger and adds three listeners per answer'),
    result('Logging: time format', 'µs CPU/req', [name('gateway-iso'), us('gateway-iso')], [name('gateway'), us('gateway')], 'ISO 8601 (toISOString per line) vs epoch ms (pino\'s default)'),
    result('Logging: destination, one caller (c=1)', 'µs CPU/req', [name('per-line'), alone[0]!.cpuUs], [name('gateway'), alone[1]!.cpuUs],
      'the same two servers driven by one connection: each line is written alone unless batched'),
    result('Logging: destination', 'µs CPU/req', [name('per-line'), us('per-line')], [name('gateway'), us('gateway')],
      `asynchronous either way (a slow stdout never blocks a request); batched: lines wait until 4 KiB are pending or 100 ms have passed, one thread-pool write per batch instead of per line. A sync destination (a write syscall per line on this thread): ${us('sync').toFixed(1)} µs/req`),
  ];
}

// ---------------------------------------------------------------------------------------------

export async function runLevers(options: LeverOptions): Promise<LeverResult[]> {
  const started: LeverServer[] = [];
  try {
    // A real position from the data service, so the cursors carry what the gateway's carry.
    const first = (await (await fetch(`${options.backendUrl}${PAGE_PATH}`)).json()) as { next_after?: unknown };
    if (typeof first.next_after !== 'string') throw new Error(`the data service at ${options.backendUrl} gave no next_after`);
    // LEVERS=upstream,cursor,... runs only those (all by default): one lever alone while working on it.
    const only = process.env.LEVERS ? new Set(process.env.LEVERS.split(',')) : undefined;
    const wanted = (name: string): boolean => !only || only.has(name);
    return [
      ...(wanted('upstream') ? await upstreamLever(options.backendUrl, options.seconds, started) : []),
      ...(wanted('cursor') ? await cursorLever(first.next_after) : []),
      ...(wanted('limits') ? await limitsLever(options.redisUrl, options.seconds) : []),
      ...(wanted('logging') ? await loggingLever(options.seconds, started) : []),
      ...(wanted('page') ? await pageLever(options.backendUrl) : []),
      ...(wanted('writes') ? await answerWritesLever(options.backendUrl, options.seconds, started) : []),
      ...(options.bigKeysFile && wanted('keys') ? keysLever(options.bigKeysFile) : []),
    ];
  } finally {
    await Promise.all(started.map((s) => s.stop().catch(() => undefined))); // already stopped ones return at once
  }
}

const figure = (v: number): string => (v >= 100 ? Math.round(v).toLocaleString('en') : v.toFixed(1));

export function renderLevers(results: LeverResult[]): string {
  const lines = [
    '| Lever | Before | After | Unit | After ÷ before |',
    '|---|---|---|---|---|',
    ...results.map((r) => `| ${r.lever} | ${r.before.label}: **${figure(r.before.value)}** | ${r.after.label}: **${figure(r.after.value)}** | ${r.unit} | ${r.ratio.toFixed(2)}× |`),
  ];
  const notes = results.filter((r) => r.note).map((r) => `- ${r.lever} (${r.unit}): ${r.note}`);
  return `${lines.join('\n')}\n${notes.length ? `\n${notes.join('\n')}\n` : ''}`;
}

async function main(): Promise<void> {
  if (!existsSync(path.join(ROOT, 'dist', 'backend-mock', 'main.js'))) throw new Error('dist/ is missing: run npm run build first');
  const seconds = Number(process.env.BENCH_SECONDS ?? 5);
  let backend: RunningProcess | undefined;
  let redisServer: Awaited<ReturnType<typeof startRedis>> | undefined;
  try {
    backend = await startProcess('backend-mock/main.js', { BACKEND_PORT: '0', LOG_LEVEL: 'info' }, 60_000);
    // Drain its output: a data service logging every request must not fill a buffer here.
    for (const stream of [backend.child.stdout!, backend.child.stderr!]) {
      stream.removeAllListeners('data');
      stream.resume();
    }
    redisServer = await startRedis();
    process.stdout.write(`levers (node ${process.version}, ${seconds} s runs, c=${CONCURRENCY}):\n`);
    const results = await runLevers({ redisUrl: redisServer.url, backendUrl: backend.url, seconds });
    process.stdout.write(`\n${renderLevers(results)}`);
  } finally {
    await backend?.stop().catch(() => undefined);
    await redisServer?.stop().catch(() => undefined);
  }
}

if (require.main === module) {
  main().catch((err: unknown) => {
    process.stderr.write(`levers failed: ${(err as Error).stack ?? String(err)}\n`);
    process.exitCode = 1;
  });
}
