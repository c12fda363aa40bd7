import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { CounterTally, HistogramTally } from './tally';

/** Which keys get `gateway_key_requests_total` series: none (default), a list of ids, or all. */
export type PerKeyMetrics = 'none' | 'all' | ReadonlySet<string>;

const BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10];

/** A metric counted per request through a tally: its name, HELP, labels (in `add`'s order), and whether it is a histogram (by its one label). */
interface Tallied { readonly name: string; readonly help: string; readonly labels: readonly string[]; readonly histogram?: true }

/** The metrics counted per request, by the `tally` field that counts them. */
const TALLIED = {
  requests: { name: 'gateway_requests_total', help: 'Answers by route, HTTP status and error code ("" for success).', labels: ['route', 'status', 'code'] },
  duration: { name: 'gateway_request_duration_seconds', help: 'Time from request to answer, by route.', labels: ['route'], histogram: true },
  keyRequests: {
    name: 'gateway_key_requests_total', help: 'Answers to identified keys, by key id and status; only for the keys METRICS_KEY_IDS names (none by default).', labels: ['key_id', 'status'],
  },
  limitDecisions: {
    name: 'gateway_limit_decisions_total', help: 'Limit decisions: allowed, rate_limited, quota_exceeded; store "shared" (Redis) or "local" (per instance).', labels: ['decision', 'store'],
  },
  limitRefusals: {
    name: 'gateway_limit_refusals_total',
    help: 'Requests refused 429 by window: minute (rate_limited), day or month (quota_exceeded), address (the unauthenticated budget).',
    labels: ['window'],
  },
  limitCheck: { name: 'gateway_limit_check_duration_seconds', help: 'Time the limit check took, by store: with "shared" it is one round trip to Redis.', labels: ['store'], histogram: true },
  upstreamErrors: {
    name: 'gateway_upstream_errors_total',
    help: 'Answers decided by a failed call to a listing store or the insights service, by kind (unreachable, timeout, unavailable, server_error, unreadable, aborted).',
    labels: ['kind'],
  },
  keyCache: { name: 'gateway_key_cache_total', help: 'Key-store cache look-ups: hit, miss (read from the store), stale (served during an outage).', labels: ['result'] },
  compressionFailures: {
    name: 'gateway_compression_failures_total', help: 'Answers a codec failed to compress (sent uncompressed instead), by coding: gzip, br, zstd.', labels: ['coding'],
  },
} as const satisfies Record<string, Tallied>;

export type Tallies = { [K in keyof typeof TALLIED]: (typeof TALLIED)[K] extends { histogram: true } ? HistogramTally : CounterTally };

/** The tallies of TALLIED, each with its prom-client metric in `registry`, which folds the tally in when read. */
function talliesIn(registry: Registry): Tallies {
  const tallies: Record<string, CounterTally | HistogramTally> = {};
  for (const [field, m] of Object.entries(TALLIED) as Array<[string, Tallied]>) {
    const common = { name: m.name, help: m.help, labelNames: m.labels, registers: [registry] };
    if (m.histogram) {
      const tally = new HistogramTally(m.labels[0]!, BUCKETS);
      new Histogram({ ...common, buckets: BUCKETS, collect() { tally.foldInto(this); } });
      tallies[field] = tally;
    } else {
      const tally = new CounterTally(m.labels);
      new Counter({ ...common, collect() { tally.foldInto(this); } });
      tallies[field] = tally;
    }
  }
  return tallies as Tallies;
}

/**
 * The gateway's Prometheus metrics, in a registry of its own (served on the ops port only).
 * Per-key series carry the key id, never a key value, and only for the keys `METRICS_KEY_IDS`
 * names: one series per key and status would be a cardinality problem at 100,000 keys.
 *
 * What is counted per request (TALLIED: answers, their duration, upstream errors, per-key answers,
 * limit decisions, key-cache look-ups, codec failures) is counted through `tally` (plain numbers,
 * see tally.ts) and folded into the prom-client metric when the registry is read; the rest is
 * prom-client's as is.
 */
export function createMetrics(options: { redis: boolean; perKey?: PerKeyMetrics }) {
  const perKey = options.perKey ?? 'none';
  /** True when this key id gets per-key series. */
  const countsKey = (keyId: string): boolean => (perKey === 'none' ? false : perKey === 'all' ? true : perKey.has(keyId));
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'gateway_' });
  const tally = talliesIn(registry);
  const redisUp = new Gauge({
    name: 'gateway_redis_up',
    help: '1 when the Redis connection is ready, 0 when not; absent when Redis is not used.',
    // With GATEWAY_WORKERS > 1 the primary sums the workers' metrics; this one is 1 only when every worker's connection is.
    aggregator: 'min',
    registers: options.redis ? [registry] : [],
  });
  const reloads = new Counter({
    name: 'gateway_config_reloads_total',
    help: 'Reloads of the keys file and gateway config: applied or refused.',
    labelNames: ['result'] as const,
    registers: [registry],
  });
  const keyStoreLost = new Gauge({
    name: 'gateway_key_store_lost',
    help: '1 while the Redis key store answers without its marker (restarted empty or flushed: restore it from an export), else 0; absent without the Redis key store.',
    registers: options.redis ? [registry] : [],
  });
  const spansDropped = new Counter({
    name: 'gateway_spans_dropped_total',
    help: 'Trace spans dropped, never exported: the bounded queue was full (queue_full) or the export failed (export_failed); 0 while tracing is off.',
    labelNames: ['reason'] as const,
    registers: [registry],
  });
  // Both series from the start, so a dashboard or an alert finds them before the first drop.
  for (const reason of ['queue_full', 'export_failed']) spansDropped.inc({ reason }, 0);
  /** Turns `gateway_webhook_backlog` on: `source` is read at every scrape. */
  const watchWebhookBacklog = (source: () => Promise<{ queued: number; retrying: number; dead: number }>): void => {
    new Gauge({
      name: 'gateway_webhook_backlog',
      help: 'Webhook events not yet delivered, by state: queued (due or in flight), retrying, dead; absent without WEBHOOK_URL.',
      labelNames: ['state'] as const,
      // Every worker reads the same shared queue: the primary shows one reading, not their sum.
      aggregator: 'max',
      registers: [registry],
      async collect() {
        const b = await source().catch(() => undefined);
        if (b) for (const state of ['queued', 'retrying', 'dead'] as const) this.set({ state }, b[state]);
      },
    });
  };
  return { registry, tally, countsKey, keyStoreLost, spansDropped, redisUp, reloads, watchWebhookBacklog };
}

export type Metrics = ReturnType<typeof createMetrics>;
