/** Renders benchmark results as a Markdown table and an SVG bar chart (no dependencies). */

export interface Row {
  config: string;
  concurrency: number;
  rps: number;
  p50: number;
  p99: number;
  cpuUs?: number;
  rssMb?: number;
  non2xx: number;
  ratio?: number;
  /** CPU per request as a multiple of the bare node:http server's (the page from memory), same run. */
  cpuVsBare?: number;
}

interface Depth { rps: number; cpuUs?: number; rssMb?: number }
interface Scaled { startMs: number; measure: Depth }
export interface Latency { p50: number; p99: number }
export interface Results {
  date: string;
  seconds: number;
  node: string;
  /** Size of the page every target answers (the gateway's answer). */
  pageBytes: number;
  rows: Row[];
  latencies: { baselineC1: Latency; gatewayC1: Latency; baselineC10: Latency; gatewayC10: Latency };
  depth: { page1: Depth; page2: Depth; page1000: Depth };
  /** First page at c=10: one key, and 100,000 keys (requests spread over 1,000 of them), per store. */
  scale: { keys: number; oneKey: Scaled; redisOneKey: Scaled; file: Scaled; redis: Scaled };
}

const fmt = (n: number | undefined, digits = 0): string => (n === undefined ? '—' : n.toFixed(digits));

/** The table plus the targets of the performance issue, each marked met or not. */
export function renderMarkdown(r: Results): string {
  const lines = [
    `Benchmark of ${r.date} (${r.node}, ${(r.pageBytes / 1024).toFixed(1)} KB page, keep-alive; the targets take turns in 1 s rounds, ${r.seconds} rounds each after a 1 s warm-up, median round)`,
    '',
    '| Configuration | Conc. | req/s | p50 ms (autocannon, whole ms) | p99 ms | CPU µs/req | CPU × bare server | RSS MB | × baseline req/s | non-2xx |',
    '|---|---|---|---|---|---|---|---|---|---|',
    ...r.rows.map((row) =>
      `| ${row.config} | ${row.concurrency} | ${fmt(row.rps)} | ${row.p50} | ${row.p99} | ${fmt(row.cpuUs)} | ${fmt(row.cpuVsBare, 1)} | ${fmt(row.rssMb)} | ${fmt(row.ratio, 2)} | ${row.non2xx} |`),
    '',
  ];
  const find = (prefix: string, c: number): Row | undefined => r.rows.find((row) => row.config.startsWith(prefix) && row.concurrency === c);
  const redis50 = find('gateway, Redis', 50);
  const checks: Array<[string, string, boolean]> = [];
  const peer50 = find('peer', 50);
  const baseline50 = find('baseline', 50);
  if (redis50?.cpuUs !== undefined && peer50?.cpuUs !== undefined) {
    checks.push(['gateway CPU per listing request ≤ the Fastify peer\'s (Redis, c=50)', `${fmt(redis50.cpuUs)} vs ${fmt(peer50.cpuUs)} µs (${fmt(redis50.cpuUs / peer50.cpuUs, 2)}×)`, redis50.cpuUs <= peer50.cpuUs]);
  }
  if (redis50?.cpuVsBare !== undefined) checks.push(['gateway CPU per request ≤ 10× the bare server\'s (Redis, c=50)', `${fmt(redis50.cpuVsBare, 1)}×`, redis50.cpuVsBare <= 10]);
  if (redis50?.cpuUs !== undefined && baseline50?.cpuUs !== undefined) {
    const x = redis50.cpuUs / baseline50.cpuUs;
    checks.push(['moonshot: gateway CPU ≤ 1.5× the bare proxy\'s (Redis, c=50)', `${fmt(x, 2)}× (${fmt(redis50.cpuUs)} vs ${fmt(baseline50.cpuUs)} µs)`, x <= 1.5]);
  }
  if (redis50?.ratio !== undefined) checks.push(['req/s ≥ 0.4 × baseline, Redis, c=50', `${fmt(redis50.ratio, 2)}×`, redis50.ratio >= 0.4]);
  const l = r.latencies;
  const addedP50 = l.gatewayC1.p50 - l.baselineC1.p50;
  const addedP99 = l.gatewayC10.p99 - l.baselineC10.p99;
  checks.push(['added p50 latency at c=1 ≤ 0.3 ms (Redis, hrtime-timed)', `${fmt(addedP50, 3)} ms (${fmt(l.gatewayC1.p50, 3)} vs ${fmt(l.baselineC1.p50, 3)})`, addedP50 <= 0.3]);
  checks.push(['added p99 latency at c=10 ≤ 2 ms (Redis, hrtime-timed)', `${fmt(addedP99, 3)} ms (${fmt(l.gatewayC10.p99, 3)} vs ${fmt(l.baselineC10.p99, 3)})`, addedP99 <= 2]);
  const depthRatio = r.depth.page2.rps / r.depth.page1000.rps;
  checks.push(['page 1,000 within 1.2× of page 2 (req/s)', `${fmt(depthRatio, 2)}×`, depthRatio <= 1.2]);
  const sc = r.scale;
  const perRequest = (big: Scaled, one: Scaled): number => (big.measure.cpuUs ?? 0) / (one.measure.cpuUs ?? 1);
  const maxRss = Math.max(...r.rows.filter((row) => row.config.startsWith('gateway')).map((row) => row.rssMb ?? 0));
  checks.push(['gateway RSS under load ≤ 150 MB (1 key)', `${fmt(maxRss)} MB`, maxRss <= 150]);
  for (const [store, big, one] of [['keys file', sc.file, sc.oneKey], ['Redis key store', sc.redis, sc.redisOneKey]] as const) {
    checks.push([`100,000 keys (${store}): start-up ≤ 2 s`, `${big.startMs} ms (1 key: ${one.startMs} ms)`, big.startMs <= 2000]);
    const cost = perRequest(big, one);
    checks.push([`100,000 keys (${store}): per-request CPU within noise (≤ 1.15× of 1 key, c=10)`, `${fmt(cost, 2)}× (${fmt(big.measure.cpuUs)} vs ${fmt(one.measure.cpuUs)} µs)`, cost <= 1.15]);
    const rss = big.measure.rssMb ?? 0;
    checks.push([`100,000 keys (${store}): RSS under load ≤ 150 MB`, `${fmt(rss)} MB`, rss <= 150]);
  }
  lines.push('| Target | Measured | Met |', '|---|---|---|', ...checks.map(([t, m, ok]) => `| ${t} | ${m} | ${ok ? 'yes' : 'no'} |`), '');
  lines.push(`Page depth (c=10, embedded): page 1 ${fmt(r.depth.page1.rps)} req/s (no cursor), page 2 ${fmt(r.depth.page2.rps)} req/s, page 1,000 ${fmt(r.depth.page1000.rps)} req/s.`);
  lines.push(`Key-store scale (first page, c=10, requests spread over 1,000 of ${sc.keys} keys): keys file ${fmt(sc.file.measure.rps)} req/s, ${fmt(sc.file.measure.cpuUs)} µs CPU/req; ` +
    `Redis key store ${fmt(sc.redis.measure.rps)} req/s, ${fmt(sc.redis.measure.cpuUs)} µs CPU/req.`, '');
  return lines.join('\n');
}

/** Requests per second per configuration and concurrency, as grouped bars. */
export function renderChart(rows: Row[]): string {
  const configs = [...new Set(rows.map((r) => r.config))];
  const levels = [...new Set(rows.map((r) => r.concurrency))];
  const max = Math.max(...rows.map((r) => r.rps), 1);
  const colours = ['#4c78a8', '#f58518', '#54a24b', '#e45756', '#72b7b2'];
  const width = 760;
  const rowHeight = 18;
  const groupHeight = levels.length * rowHeight + 16;
  const left = 300;
  const height = configs.length * groupHeight + 40;
  const parts = [`<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" font-family="sans-serif" font-size="12">`,
    `<text x="10" y="18" font-weight="bold">Requests per second (keep-alive; bars: concurrency ${levels.join(', ')})</text>`];
  configs.forEach((config, i) => {
    const top = 30 + i * groupHeight;
    parts.push(`<text x="10" y="${top + 14}">${config.replace(/&/g, '&amp;')}</text>`);
    levels.forEach((c, j) => {
      const row = rows.find((r) => r.config === config && r.concurrency === c);
      if (!row) return;
      const w = Math.max(1, ((width - left - 80) * row.rps) / max);
      const y = top + j * rowHeight;
      parts.push(`<rect x="${left}" y="${y}" width="${w.toFixed(1)}" height="${rowHeight - 4}" fill="${colours[j % colours.length]}"/>`);
      parts.push(`<text x="${left + w + 4}" y="${y + 11}">c=${c}: ${row.rps.toFixed(0)}</text>`);
    });
  });
  parts.push('</svg>');
  return `${parts.join('\n')}\n`;
}
