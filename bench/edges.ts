/**
 * `npm run bench:edges` (after `npm run build`; also part of `npm run bench`): the rows of the
 * "edges" issue, measured in one run on this machine.
 *
 *   1. Compression levels, in-process: the gateway's 7.9 KB page (20 listings) compressed at each
 *      level of br, gzip and zstd (where the runtime has it): bytes, ratio, CPU µs per page, bytes
 *      saved per µs. The variants take turns in rounds; each reports its least-CPU round (other work on a shared machine only adds).
 *   2. Compression end to end: one gateway (memory counters, YAML keys) driven by autocannon at c=10
 *      with each Accept-Encoding in turn: gateway CPU µs per request, the added CPU of each coding
 *      (median of its per-round differences with identity), major GCs per 1,000 answers (from the
 *      gateway's /metrics) and bytes per answer.
 *   3. Tracing end to end: gateways with tracing off, on at parentbased_traceidratio 0.01, and on at
 *      1.0, exporting (http/protobuf) to a local sink; gateway CPU µs per request, taking turns.
 *      With EDGES_BEFORE_DIST=<a dist/ directory of a build without the tracing code>, that build's
 *      gateway is measured beside them ("before", for the "tracing off costs nothing" target).
 *   4. Tracing hooks, in-process: the hooks a request runs (server span, limit step, upstream call
 *      with its traceparent, end) at ratio 0.01 and 1.0, CPU µs per request.
 *
 * BENCH_SECONDS (default 5) sets the rounds. Run alone, it starts its own data service.
 */
import autocannon from 'autocannon';
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import http, { type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { compressSync, DYNAMIC_LEVELS, OFFERED } from '../gateway/compression/codecs';
import type { ContentCoding } from '../gateway/compression/negotiate';
import { parseTracingEnv } from '../gateway/config/otel-env';
import type { RequestContext } from '../gateway/pipeline';
import { startOtelSdk } from '../gateway/tracing/otel-sdk';
import { ROOT, startNodeScript, startProcess, type RunningProcess } from '../test/kit/processes';
import { benchKeysFile, listeningPort } from './on-off';
import { cpuSeconds, drainOutput, ownCpuMicros as cpuMicros } from './proc-cpu';

export interface LevelRow { coding: ContentCoding; level: number; bytes: number; ratio: number; cpuUs: number; savedPerUs: number; chosen: boolean; picked?: boolean }
export interface GatewayRow { name: string; cpuUs: number; rps: number; bytesPerAnswer?: number; addedUs?: number; majorGcPer1000?: number }
export interface EdgesResult { pageBytes: number; levels: LevelRow[]; compression: GatewayRow[]; tracing: GatewayRow[]; hooks: { name: string; cpuUs: number }[] }

const KEY_VALUE = `edges-${randomBytes(12).toString('hex')}`;
const PAGE_QUERY = 'country=GB&limit=20';

/**
 * 1. Each level of each coding, in turns: the least CPU µs per page over the rounds. On a shared
 * machine other work only ever adds to a round, so the least round is the level's own cost.
 */
export function measureLevels(page: Buffer, rounds: number): LevelRow[] {
  const levels: Record<ContentCoding, number[]> = { gzip: [1, 2, 3, 4, 5, 6, 9], br: [1, 2, 3, 4, 5, 6], zstd: [1, 2, 3, 4, 5, 6, 9] };
  const variants = OFFERED.flatMap((coding) => levels[coding].map((level) => ({ coding, level, bytes: compressSync(coding, page, level).length, samples: [] as number[] })));
  const perRound = 100;
  for (let r = 0; r < rounds + 1; r++) {
    for (const v of variants) {
      const started = cpuMicros();
      for (let i = 0; i < perRound; i++) compressSync(v.coding, page, v.level);
      if (r > 0) v.samples.push((cpuMicros() - started) / perRound); // round 0 warms up
    }
  }
  const rows: LevelRow[] = variants.map((v) => {
    const cpuUs = Math.min(...v.samples);
    return { coding: v.coding, level: v.level, bytes: v.bytes, ratio: page.length / v.bytes, cpuUs, savedPerUs: (page.length - v.bytes) / cpuUs, chosen: DYNAMIC_LEVELS[v.coding] === v.level };
  });
  for (const coding of OFFERED) pickLevel(rows.filter((r) => r.coding === coding)).picked = true;
  return rows;
}

/**
 * The rule (codecs.ts): the most bytes saved per µs; levels within 15 % of the best are equal, and
 * among them the smallest output wins (outputs within 1 % of each other equal too: then the cheaper).
 */
export function pickLevel(rows: readonly LevelRow[]): LevelRow {
  const best = Math.max(...rows.map((r) => r.savedPerUs));
  const equal = rows.filter((r) => r.savedPerUs >= best * 0.85);
  const fewest = Math.min(...equal.map((r) => r.bytes));
  return equal.filter((r) => r.bytes <= fewest * 1.01).sort((a, b) => a.cpuUs - b.cpuUs)[0]!;
}

interface Target { name: string; url: string; pid: number; headers: Record<string, string> }

/**
 * Targets in turns of 1 s at c=10 (CPU per request from /proc): each reports its least-CPU round
 * and its best req/s round, because on this shared machine other work only ever adds to a round.
 */
async function alternate(targets: readonly Target[], rounds: number, samples = targets.map(() => ({ cpu: [] as number[], rps: [] as number[], requests: 0 }))): Promise<GatewayRow[]> {
  for (const t of targets) await autocannon({ url: t.url, connections: 10, duration: 1, headers: t.headers });
  for (let r = 0; r < rounds; r++) {
    for (const [i, t] of targets.entries()) {
      const before = cpuSeconds(t.pid);
      const result = await autocannon({ url: t.url, connections: 10, duration: 1, headers: t.headers });
      samples[i]!.cpu.push(((cpuSeconds(t.pid) - before) * 1e6) / result.requests.total);
      samples[i]!.rps.push(result.requests.average);
      samples[i]!.requests += result.requests.total;
    }
  }
  return targets.map((t, i) => ({ name: t.name, cpuUs: Math.min(...samples[i]!.cpu), rps: Math.max(...samples[i]!.rps) }));
}

const median = (values: readonly number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

/** Major collections the gateway made so far, from its /metrics (prom-client's default GC histogram). */
async function majorGcs(opsUrl: string): Promise<number> {
  const text = await (await fetch(`${opsUrl}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith('gateway_nodejs_gc_duration_seconds_count{') && l.includes('kind="major"'));
  return line ? Number(line.split(' ').pop()) : 0;
}

/**
 * 2. One gateway, each Accept-Encoding in turn at c=10. The added CPU of a coding is the median over
 * the rounds of its difference with the identity round next to it (the machine's slow moments land
 * on both); major GCs per 1,000 answers from the gateway's /metrics, the codings measured one after
 * the other (the counter is the process's).
 */
async function measureCompression(gateway: RunningProcess, opsUrl: string, pageUrl: string, rounds: number): Promise<GatewayRow[]> {
  const auth = { 'x-api-key': KEY_VALUE };
  const codings = ['identity', ...OFFERED];
  const targets = codings.map((c) => ({ name: c, url: pageUrl, pid: gateway.child.pid!, headers: { ...auth, 'accept-encoding': c } }));
  const samples = targets.map(() => ({ cpu: [] as number[], rps: [] as number[], requests: 0 }));
  const rows = await alternate(targets, rounds, samples);
  for (const [i, row] of rows.entries()) {
    row.cpuUs = median(samples[i]!.cpu);
    row.rps = median(samples[i]!.rps);
    row.addedUs = median(samples[i]!.cpu.map((cpu, r) => cpu - samples[0]!.cpu[r]!));
    const before = await majorGcs(opsUrl);
    const result = await autocannon({ url: pageUrl, connections: 10, duration: Math.max(3, rounds), headers: targets[i]!.headers });
    row.majorGcPer1000 = ((await majorGcs(opsUrl)) - before) * 1000 / result.requests.total;
  }
  return rows;
}

/** A collector that takes every export and answers 200 (the exporter's cost is the gateway's, not the sink's). */
export async function startSink(): Promise<{ url: string; close(): Promise<void> }> {
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }),
  };
}

/** 4. The tracing hooks of one request, in-process, against the real SDK exporting to the sink. */
async function measureHooks(sinkUrl: string, ratio: string, iterations: number): Promise<number> {
  const config = parseTracingEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: sinkUrl, OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: ratio, OTEL_BSP_SCHEDULE_DELAY: '100' })!;
  const tracing = await startOtelSdk(config, () => undefined);
  const req = { method: 'GET', headers: {} } as IncomingMessage;
  const ctx = { req, path: '/v1/properties', route: 'properties', key: { id: 'bench' } } as unknown as RequestContext;
  const answer = { status: 200, headers: {}, bytes: Buffer.alloc(0) };
  const run = (n: number): void => {
    for (let i = 0; i < n; i++) {
      const trace = tracing.requestTracer(req, '/v1/properties')!;
      trace.step('limits.check').end();
      trace.call('http://127.0.0.1:8081', '/internal/v1/listings?country=GB&limit=20').end(answer);
      trace.end(ctx, 200);
      trace.ids();
    }
  };
  const samples: number[] = [];
  for (let r = 0; r < 11; r++) {
    // In slices with a turn of the event loop between them, so the batch processor exports as in a server.
    const started = cpuMicros();
    for (let done = 0; done < iterations; done += 500) {
      run(500);
      await new Promise((resolve) => setImmediate(resolve));
    }
    if (r > 0) samples.push((cpuMicros() - started) / iterations);
  }
  await tracing.shutdown(2000);
  return Math.min(...samples);
}

async function startGateway(keysFile: string, backendUrl: string, env: Record<string, string>, dist?: string): Promise<RunningProcess & { opsUrl?: string }> {
  const fullEnv = { PORT: '0', LOG_LEVEL: 'info', CURSOR_SECRET: randomBytes(32).toString('base64url'), GATEWAY_CONFIG: path.join(ROOT, 'config/gateway.yaml'), KEYS_FILE: keysFile, BACKEND_URL: backendUrl, ...env };
  const p: RunningProcess & { opsUrl?: string } = dist ? await startNodeScript(path.join(dist, 'gateway/main.js'), fullEnv, 60_000) : await startProcess('gateway/main.js', fullEnv, 60_000);
  if (env.OPS_PORT !== undefined) p.opsUrl = `http://127.0.0.1:${await listeningPort(p, 'ops listening')}`;
  return drainOutput(p);
}

export async function runEdges(options: { backendUrl: string; seconds: number; beforeDist?: string }): Promise<EdgesResult> {
  const { backendUrl, seconds } = options;
  const keysFile = benchKeysFile('bench', KEY_VALUE);
  const sink = await startSink();
  const started: RunningProcess[] = [];
  try {
    const plain = await startGateway(keysFile, backendUrl, { OPS_PORT: '0' });
    started.push(plain);
    const pageUrl = `${plain.url}/v1/properties?${PAGE_QUERY}`;
    const page = Buffer.from(await (await fetch(pageUrl, { headers: { 'x-api-key': KEY_VALUE, 'accept-encoding': 'identity' } })).arrayBuffer());
    const levels = measureLevels(page, seconds * 6);

    const auth = { 'x-api-key': KEY_VALUE };
    const compression = await measureCompression(plain, plain.opsUrl!, pageUrl, seconds);
    for (const row of compression) {
      const answer = await new Promise<number>((resolve, reject) => {
        http.get(pageUrl, { headers: { ...auth, 'accept-encoding': row.name } }, (res) => {
          let n = 0;
          res.on('data', (c: Buffer) => (n += c.length));
          res.on('end', () => resolve(n));
        }).on('error', reject);
      });
      row.bytesPerAnswer = answer;
    }

    const otel = (ratio: string): Record<string, string> => ({ OTEL_EXPORTER_OTLP_ENDPOINT: sink.url, OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: ratio });
    const gateways: Array<[string, RunningProcess]> = [['tracing off', plain]];
    if (options.beforeDist) gateways.unshift(['before (a build without the tracing code)', await startGateway(keysFile, backendUrl, {}, options.beforeDist)]);
    gateways.push(['tracing on, ratio 0.01', await startGateway(keysFile, backendUrl, otel('0.01'))], ['tracing on, ratio 1.0', await startGateway(keysFile, backendUrl, otel('1.0'))]);
    started.push(...gateways.map(([, p]) => p).filter((p) => p !== plain));
    const tracing = await alternate(gateways.map(([name, p]) => ({ name, url: `${p.url}/v1/properties?${PAGE_QUERY}`, pid: p.child.pid!, headers: auth })), seconds);

    const hooks = [
      { name: 'hooks of one request, ratio 0.01', cpuUs: await measureHooks(sink.url, '0.01', 20_000) },
      { name: 'hooks of one request, ratio 1.0', cpuUs: await measureHooks(sink.url, '1.0', 5_000) },
    ];
    return { pageBytes: page.length, levels, compression, tracing, hooks };
  } finally {
    await Promise.all(started.map((p) => p.stop()));
    await sink.close();
  }
}

export function renderEdges(r: EdgesResult): string {
  const f = (n: number, d = 1): string => n.toFixed(d);
  const identity = r.compression.find((c) => c.name === 'identity')!;
  const off = r.tracing.find((t) => t.name === 'tracing off')!;
  return [
    `### Compression levels (in-process, the ${r.pageBytes}-byte page; least of the rounds; the rule of codecs.ts picks ●, the gateway uses ✓)`,
    '',
    '| Coding | Level | Bytes | Ratio | CPU µs/page | Bytes saved per µs | Picked | Used |',
    '|---|---|---|---|---|---|---|---|',
    ...r.levels.map((l) => `| ${l.coding} | ${l.level} | ${l.bytes} | ${f(l.ratio, 2)}× | ${f(l.cpuUs)} | ${f(l.savedPerUs, 0)} | ${l.picked ? '●' : ''} | ${l.chosen ? '✓' : ''} |`),
    '',
    '### Compression end to end (gateway, memory counters, c=10; median of the 1 s rounds; added CPU: median of each round\'s difference with the identity round beside it; major GCs from the gateway\'s /metrics)',
    '',
    '| Accept-Encoding | Bytes per answer | Saved | Gateway CPU µs/req | Added CPU µs/req | Major GCs per 1,000 answers | req/s |',
    '|---|---|---|---|---|---|---|',
    ...r.compression.map((c) => `| ${c.name} | ${c.bytesPerAnswer} | ${f((1 - c.bytesPerAnswer! / identity.bytesPerAnswer!) * 100, 0)} % | ${f(c.cpuUs)} | ${f(c.addedUs ?? c.cpuUs - identity.cpuUs)} | ${c.majorGcPer1000 === undefined ? '' : f(c.majorGcPer1000, 2)} | ${f(c.rps, 0)} |`),
    '',
    '### Tracing (gateway, memory counters, c=10, exporting http/protobuf to a local sink; least-CPU and best req/s of the 1 s rounds)',
    '',
    '| Gateway | CPU µs/req | vs tracing off | req/s |',
    '|---|---|---|---|',
    ...r.tracing.map((t) => `| ${t.name} | ${f(t.cpuUs)} | ${t === off ? '—' : `${t.cpuUs >= off.cpuUs ? '+' : ''}${f(t.cpuUs - off.cpuUs)} µs`} | ${f(t.rps, 0)} |`),
    ...r.hooks.map((h) => `| ${h.name} (in-process, SDK and export included, least of 10 rounds) | ${f(h.cpuUs, 2)} | | |`),
    '',
  ].join('\n');
}

if (require.main === module) {
  const seconds = Number(process.env.BENCH_SECONDS ?? 5);
  (async () => {
    const backend = await startProcess('backend-mock/main.js', { BACKEND_PORT: '0', LOG_LEVEL: 'info' }, 60_000);
    for (const stream of [backend.child.stdout!, backend.child.stderr!]) stream.resume();
    try {
      const result = await runEdges({ backendUrl: backend.url, seconds, ...(process.env.EDGES_BEFORE_DIST ? { beforeDist: process.env.EDGES_BEFORE_DIST } : {}) });
      const markdown = renderEdges(result);
      writeFileSync(path.join(ROOT, 'bench/results/edges.md'), `# Edges: compression and tracing (${new Date().toISOString()}, ${process.version}, BENCH_SECONDS=${seconds})\n\n${markdown}`);
      writeFileSync(path.join(ROOT, 'bench/results/edges.json'), `${JSON.stringify(result, null, 2)}\n`);
      process.stdout.write(`${markdown}\nwritten: bench/results/edges.{md,json}\n`);
    } finally {
      await backend.stop();
    }
  })().catch((err: unknown) => {
    process.stderr.write(`bench failed: ${(err as Error).stack ?? String(err)}\n`);
    process.exit(1);
  });
}
