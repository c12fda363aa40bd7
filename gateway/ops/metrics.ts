import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { CounterTally, HistogramTally } from './tally';

/** Which keys get `gateway_key_requests_total` series: none (default), a list of ids, or all. */
export type PerKeyMetrics = 'none' | 'all' | ReadonlySet<string>;

/**
 * The gateway's Prometheus metrics, in a registry of its own (served on the ops port only).
 * Per-key series carry the key id, never a key value, and only for the keys `METRICS_KEY_IDS`
 * names: one series per key and status would be a cardinality problem at 100,000 keys.
 *
 * What is counted per request (answers, their duration, upstream errors, per-key answers, limit
 * decisions, key-cache look-ups) is counted through `tally` (plain numbers, see tally.ts) and
 * folded into the prom-client metric when the registry is read; the rest is prom-client's as is.
 */
export function createMetrics(options: { redis: boolean; perKey?: PerKeyMetrics }) {
  const perKey = options.perKey ?? 'none';
  /** True when this key id gets per-key series. */
  const countsKey = (keyId: string): boolean => (perKey === 'none' ? false : perKey === 'all' ? true : perKey.has(keyId));
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'gateway_' });
  const buckets = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10];
  const tally = {
    requests: new CounterTally(['route', 'status', 'code']),
    duration: new HistogramTally('route', buckets),
    keyRequests: new CounterTally(['key_id', 'status']),
    limitDecisions: new CounterTally(['decision', 'store']),
    limitRefusals: new CounterTally(['window']),
    limitCheck: new HistogramTally('store', buckets),
    upstreamErrors: new CounterTally(['kind']),
    keyCache: new CounterTally(['result']),
  };
  const requests = new Counter({
    name: 'gateway_requests_total',
    help: 'Answers by route, HTTP status and error code ("" for success).',
    labelNames: ['route', 'status', 'code'] as const,
    registers: [registry],
    collect() {
      tally.requests.foldInto(this);
    },
  });
  const duration = new Histogram({
    name: 'gateway_request_duration_seconds',
    help: 'Time from request to answer, by route.',
    labelNames: ['route'] as const,
    buckets,
    registers: [registry],
    collect() {
      tally.duration.foldInto(this);
    },
  });
  const keyRequests = new Counter({
    name: 'gateway_key_requests_total',
    help: 'Answers to identified keys, by key id and status; only for the keys METRICS_KEY_IDS names (none by default).',
    labelNames: ['key_id', 'status'] as const,
    registers: [registry],
    collect() {
      tally.keyRequests.foldInto(this);
    },
  });
  const limitDecisions = new Counter({
    name: 'gateway_limit_decisions_total',
    help: 'Limit decisions: allowed, rate_limited, quota_exceeded; store "shared" (Redis) or "local" (per instance).',
    labelNames: ['decision', 'store'] as const,
    registers: [registry],
    collect() {
      tally.limitDecisions.foldInto(this);
    },
  });
  const limitRefusals = new Counter({
    name: 'gateway_limit_refusals_total',
    help: 'Requests refused 429 by window: minute (rate_limited), day or month (quota_exceeded), address (the unauthenticated budget).',
    labelNames: ['window'] as const,
    registers: [registry],
    collect() {
      tally.limitRefusals.foldInto(this);
    },
  });
  const limitCheck = new Histogram({
    name: 'gateway_limit_check_duration_seconds',
    help: 'Time the limit check took, by store: with "shared" it is one round trip to Redis.',
    labelNames: ['store'] as const,
    buckets,
    registers: [registry],
    collect() {
      tally.limitCheck.foldInto(this);
    },
  });
  const upstreamErrors = new Counter({
    name: 'gateway_upstream_errors_total',
    help: 'Answers decided by a failed call to a listing store or the insights service, by kind (unreachable, timeout, unavailable, server_error, unreadable, aborted).',
    labelNames: ['kind'] as const,
    registers: [registry],
    collect() {
      tally.upstreamErrors.foldInto(this);
    },
  });
  const keyCache = new Counter({
    name: 'gateway_key_cache_total',
    help: 'Key-store cache look-ups: hit, miss (read from the store), stale (served during an outage).',
    labelNames: ['result'] as const,
    registers: [registry],
    collect() {
      tally.keyCache.foldInto(this);
    },
  });
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
  return {
    registry, tally, countsKey, keyStoreLost, spansDropped, requests, duration, keyRequests, limitDecisions, limitRefusals, limitCheck, upstreamErrors, keyCache, redisUp, reloads,
    watchWebhookBacklog,
  };
}

export type Metrics = ReturnType<typeof createMetrics>;
