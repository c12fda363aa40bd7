/**
 * deploy/grafana/listings-gateway.json: every metric named in every query (and in the dashboard's
 * variables) is one a live gateway exports, with at least one series, after a few requests of each
 * kind: answered, refused 429 for a minute limit and for the unauthenticated budget, failed
 * upstream, on the Redis key store, with webhooks on and a reload done.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import Redis from 'ioredis';
import { stringify } from 'yaml';
import {
  awayFromMinuteEdge, DEFAULT_TIERS, makeTempDir, randomKeyValue, removeTempDirs, send, startGateway, startStub, writeKeysFile, writeTempFile, type Proc, type Stub,
} from '../kit/gateway-stack';
import { announcedUrl } from '../kit/log-lines';
import { ROOT } from '../kit/processes';
import { keyProvisioner } from '../kit/redis-keys';
import { startRedis, type RedisServer } from '../kit/redis-server';

interface Panel {
  title?: string;
  targets?: Array<{ expr: string }>;
  panels?: Panel[];
}
const dashboard = JSON.parse(fs.readFileSync(path.join(ROOT, 'deploy/grafana/listings-gateway.json'), 'utf8')) as {
  panels: Panel[];
  templating: { list: Array<{ type: string; query?: string | { query: string } }> };
};

/** PromQL's words that are not metric names. */
const PROMQL_WORDS = new Set([
  'sum', 'min', 'max', 'avg', 'count', 'topk', 'bottomk', 'by', 'without', 'on', 'ignoring', 'group_left', 'group_right', 'and', 'or', 'unless', 'bool',
  'offset', 'rate', 'irate', 'increase', 'histogram_quantile', 'clamp_min', 'clamp_max', 'label_values', 'e',
]);

/** The metric names a PromQL expression reads (label matchers, grouping labels, ranges and strings removed). */
export function metricNames(expr: string): string[] {
  const bare = expr
    .replace(/"(?:[^"\\]|\\.)*"/g, '""')
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(/\b(by|without|on|ignoring)\s*\([^)]*\)/g, ' ')
    .replace(/label_values\(([^,)]+),[^)]*\)/g, ' $1 ');
  return [...bare.matchAll(/[A-Za-z_:][A-Za-z0-9_:]*/g)].map((m) => m[0]).filter((w) => !PROMQL_WORDS.has(w));
}

function queries(): string[] {
  const out: string[] = [];
  const walk = (panels: Panel[]): void => {
    for (const p of panels) {
      for (const t of p.targets ?? []) out.push(t.expr);
      walk(p.panels ?? []);
    }
  };
  walk(dashboard.panels);
  for (const v of dashboard.templating.list) if (v.type === 'query' && v.query) out.push(typeof v.query === 'string' ? v.query : v.query.query);
  return out;
}

test('the query parser finds metric names and nothing else', () => {
  expect(metricNames('histogram_quantile(0.99, sum by (le, route) (rate(gateway_request_duration_seconds_bucket{job=~"$job",x="a{b}"}[$__rate_interval])))')).toEqual([
    'gateway_request_duration_seconds_bucket',
  ]);
  expect(metricNames('sum(rate(a_total[5m])) / clamp_min(sum(rate(b_total{c!=""}[5m])), 1e-9)')).toEqual(['a_total', 'b_total']);
  expect(metricNames('label_values(gateway_requests_total, job)')).toEqual(['gateway_requests_total']);
});

describe('against a live gateway', () => {
  let redis: RedisServer;
  let data: Stub;
  let receiver: Stub;
  let gateway: Proc;
  let opsUrl: string;
  let keyValue: string;

  beforeAll(async () => {
    [redis, data, receiver] = await Promise.all([
      startRedis(),
      startStub((_req, res) => {
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ items: [], next_after: null }));
      }),
      startStub((_req, res) => res.end()),
    ]);
    const dir = makeTempDir();
    // GB is served by a store that is away: its listings requests are upstream errors.
    const config = writeTempFile(
      'gateway.yaml',
      stringify({ tiers: DEFAULT_TIERS, refused_authentication: { per_address_per_minute: 2 }, stores: { default: data.url, countries: { GB: 'http://127.0.0.1:9' } } }),
      dir,
    );
    const direct = new Redis(redis.url);
    keyValue = await keyProvisioner(direct, config)('dash', { per_minute: 3 });
    await direct.quit();
    gateway = await startGateway({
      backendUrl: data.url,
      keysFile: writeKeysFile([], dir),
      gatewayConfig: config,
      env: {
        REDIS_URL: redis.url,
        KEY_STORE: 'redis',
        OPS_PORT: '0',
        METRICS_KEY_IDS: '*',
        WEBHOOK_URL: receiver.url,
        WEBHOOK_SECRET: `whsec_${randomBytes(32).toString('base64')}`,
      },
    });
    opsUrl = await announcedUrl(gateway, 'ops listening');
  }, 60_000);
  afterAll(async () => {
    await gateway?.stop();
    await Promise.all([redis?.stop(), data?.close(), receiver?.close()]);
    removeTempDirs();
  });

  test('every metric in every query is exported, with at least one series', async () => {
    await awayFromMinuteEdge(10_000);
    const keyed = { headers: { 'x-api-key': keyValue } };
    const statuses: number[] = [];
    statuses.push((await send(gateway.url, '/v1/properties?country=GB&limit=1', keyed)).status);
    for (let i = 0; i < 6 && !statuses.includes(429); i++) statuses.push((await send(gateway.url, '/v1/ping', keyed)).status);
    for (let i = 0; i < 3; i++) statuses.push((await send(gateway.url, '/v1/ping', { headers: { 'x-api-key': randomKeyValue('nope') } })).status);
    expect(statuses.filter((s) => s === 429).length).toBeGreaterThanOrEqual(2);
    gateway.child.kill('SIGHUP');

    const names = [...new Set(queries().flatMap(metricNames))].sort();
    expect(names.length).toBeGreaterThan(10);
    /** Series (not only HELP/TYPE) in the exposition text, by metric name. */
    const exported = (text: string): Set<string> => new Set(text.split('\n').filter((l) => l && !l.startsWith('#')).map((l) => /^[A-Za-z_:][A-Za-z0-9_:]*/.exec(l)![0]));
    let missing: string[] = names;
    const deadline = Date.now() + 15_000;
    while (missing.length && Date.now() < deadline) {
      const series = exported(await (await fetch(`${opsUrl}/metrics`)).text());
      missing = names.filter((n) => !series.has(n));
      if (missing.length) await new Promise((r) => setTimeout(r, 300));
    }
    expect(missing).toEqual([]);
    const text = await (await fetch(`${opsUrl}/metrics`)).text();
    // The panels' label values are the gateway's.
    expect(text).toMatch(/gateway_limit_refusals_total\{window="minute"\} [1-9]/);
    expect(text).toMatch(/gateway_limit_refusals_total\{window="address"\} [1-9]/);
    expect(text).toMatch(/gateway_upstream_errors_total\{kind="unreachable"\} [1-9]/);
    expect(text).toMatch(/gateway_limit_check_duration_seconds_count\{store="shared"\} [1-9]/);
    expect(text).toMatch(/gateway_webhook_backlog\{state="queued"\} \d/);
  }, 60_000);
});
