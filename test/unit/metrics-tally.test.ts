/**
 * The per-request metrics are counted in plain numbers (gateway/ops/tally.ts) and folded into
 * prom-client at scrape time. What /metrics shows must be exactly what prom-client's own
 * `inc({labels})` / `observe({labels}, v)` would have shown for the same requests: names, labels,
 * HELP, TYPE, values, over several scrapes, and summed over workers.
 */
import { AggregatorRegistry, Counter, Histogram, Registry } from 'prom-client';
import { createMetrics } from '../../gateway/ops/metrics';

const BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10];

/** The same six metrics, counted the plain prom-client way. */
function reference() {
  const registry = new Registry();
  const counter = (name: string, help: string, labelNames: string[]) => new Counter({ name, help, labelNames, registers: [registry] });
  return {
    registry,
    requests: counter('gateway_requests_total', 'Answers by route, HTTP status and error code ("" for success).', ['route', 'status', 'code']),
    duration: new Histogram({ name: 'gateway_request_duration_seconds', help: 'Time from request to answer, by route.', labelNames: ['route'], buckets: BUCKETS, registers: [registry] }),
    keyRequests: counter('gateway_key_requests_total', 'Answers to identified keys, by key id and status; only for the keys METRICS_KEY_IDS names (none by default).', ['key_id', 'status']),
    limitDecisions: counter('gateway_limit_decisions_total', 'Limit decisions: allowed, rate_limited, quota_exceeded; store "shared" (Redis) or "local" (per instance).', ['decision', 'store']),
    upstreamErrors: counter('gateway_upstream_errors_total', 'Answers decided by a failed call to a listing store or the insights service, by kind (unreachable, timeout, unavailable, server_error, unreadable, aborted).', ['kind']),
    keyCache: counter('gateway_key_cache_total', 'Key-store cache look-ups: hit, miss (read from the store), stale (served during an outage).', ['result']),
  };
}

const NAMES = ['gateway_requests_total', 'gateway_request_duration_seconds', 'gateway_key_requests_total', 'gateway_limit_decisions_total', 'gateway_upstream_errors_total', 'gateway_key_cache_total'];

// Durations exact in binary (so the sums do not depend on the order of additions), on and between bounds.
const ANSWERS: Array<[route: string, status: number, code: string, seconds: number]> = [
  ['/v1/ping', 200, '', 0.0009765625],
  ['/v1/ping', 200, '', 0.0009765625],
  ['/v1/ping', 429, 'rate_limited', 0.0005],
  ['/v1/properties', 200, '', 0.25],
  ['/v1/properties', 503, 'service_unavailable', 10],
  ['/v1/properties', 503, 'service_unavailable', 20],
  ['/v1/properties/{id}', 404, 'not_found', 0.001953125],
  ['unmatched', 404, 'not_found', 0],
  ['/v1/insights/*', 499, '', 1],
];

function record(tallied: ReturnType<typeof createMetrics>, plain: ReturnType<typeof reference>, answers: typeof ANSWERS): void {
  for (const [route, status, code, seconds] of answers) {
    tallied.tally.requests.add(route, status, code);
    tallied.tally.duration.cell(route).observe(seconds);
    plain.requests.inc({ route, status, code });
    plain.duration.observe({ route }, seconds);
    if (status >= 500) {
      tallied.tally.upstreamErrors.add('timeout');
      plain.upstreamErrors.inc({ kind: 'timeout' });
    }
    tallied.tally.keyRequests.add('acme', status);
    plain.keyRequests.inc({ key_id: 'acme', status });
    tallied.tally.limitDecisions.add(status === 429 ? 'rate_limited' : 'allowed', 'shared');
    plain.limitDecisions.inc({ decision: status === 429 ? 'rate_limited' : 'allowed', store: 'shared' });
    tallied.tally.keyCache.add('hit');
    plain.keyCache.inc({ result: 'hit' });
  }
}

const text = async (registry: Registry): Promise<string[]> => Promise.all(NAMES.map((n) => registry.getSingleMetricAsString(n)));

test('/metrics shows what prom-client would have shown, scrape after scrape', async () => {
  const tallied = createMetrics({ redis: false, perKey: 'all' });
  const plain = reference();
  expect(await text(tallied.registry)).toEqual(await text(plain.registry)); // nothing counted yet
  record(tallied, plain, ANSWERS);
  expect(await text(tallied.registry)).toEqual(await text(plain.registry));
  expect(await text(tallied.registry)).toEqual(await text(plain.registry)); // a second scrape adds nothing
  record(tallied, plain, [...ANSWERS, ['/v1/ping', 304, '', 0.125]]);
  const after = await text(tallied.registry);
  expect(after).toEqual(await text(plain.registry));
  expect(after[0]).toContain('gateway_requests_total{route="/v1/ping",status="200",code=""} 4');
  expect(after[1]).toContain('gateway_request_duration_seconds_bucket{le="+Inf",route="/v1/properties"} 6');
});

test('a reset metric starts again from what is counted after it', async () => {
  const tallied = createMetrics({ redis: false });
  const plain = reference();
  record(tallied, plain, ANSWERS);
  await tallied.registry.metrics();
  tallied.registry.resetMetrics();
  plain.registry.resetMetrics();
  record(tallied, plain, ANSWERS.slice(0, 4));
  expect(await text(tallied.registry)).toEqual(await text(plain.registry));
});

test("the workers' sum (AggregatorRegistry) is the same as with prom-client's own counting", async () => {
  const workers = [createMetrics({ redis: false, perKey: 'all' }), createMetrics({ redis: false, perKey: 'all' })];
  const plains = [reference(), reference()];
  record(workers[0]!, plains[0]!, ANSWERS);
  record(workers[1]!, plains[1]!, ANSWERS.slice(2));
  const pick = async (r: Registry) => (await r.getMetricsAsJSON()).filter((m) => NAMES.includes(m.name));
  const summed = AggregatorRegistry.aggregate(await Promise.all(workers.map((w) => pick(w.registry))));
  const expected = AggregatorRegistry.aggregate(await Promise.all(plains.map((p) => pick(p.registry))));
  expect(await summed.metrics()).toEqual(await expected.metrics());
});
