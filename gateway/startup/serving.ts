/**
 * The public gateway: the request pipeline (app.ts) with its upstreams (listing stores, insights),
 * cursor codec and refused-authentication budget; and the public listener, whose start moves
 * readiness to "serving".
 */
import { randomBytes } from 'node:crypto';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import { createGateway } from '../app';
import type { Env } from '../config/env';
import { DEFAULT_REFUSED_AUTH_PER_MINUTE, type GatewayConfig } from '../config/gateway-config';
import { createCursorCodec } from '../cursor/cursor-codec';
import type { KeyStore } from '../keys/key-record';
import type { Counters } from '../limits/counters';
import type { ResilientCounters } from '../limits/resilient-counters';
import type { Metrics } from '../ops/metrics';
import type { InstanceReadiness } from '../ops/readiness';
import { createRefusedAuthBudget, type RefusedAuthBudget } from '../limits/refused-auth-table';
import { createServer } from '../server';
import { createIdentitySigner } from '../upstream/caller-identity';
import { createInsightsUpstream, type InsightsUpstream } from '../upstream/insights-client';
import { createListingStores, type ListingStores } from '../upstream/listing-stores';
import { announceListening, isWorker } from '../workers/worker-side';
import type { KeyStores } from './key-store';
import { listen } from './listeners';
import type { SharedRedis } from './redis-and-counters';
import type { Tracing } from '../tracing/start-tracing';
import type { UsageAndWebhooks } from './usage-and-webhooks';

export interface Serving {
  readonly app: ReturnType<typeof createGateway>;
  readonly stores: ListingStores;
  readonly insights: InsightsUpstream;
  readonly refusedAuth: RefusedAuthBudget;
  /** Closes the upstream connections. */
  close(): Promise<unknown>;
}

export interface ServingDeps {
  readonly logger: Logger;
  readonly metrics: Metrics;
  readonly keyStore: KeyStore;
  readonly counters: Counters;
  readonly usageAndWebhooks: UsageAndWebhooks;
  /** Present when tracing is on (gateway/tracing/). */
  readonly tracing?: Tracing;
}

export function createServing(env: Env, config: GatewayConfig, deps: ServingDeps): Serving {
  const { logger } = deps;
  const cursorSecret = env.CURSOR_SECRET ?? randomBytes(32).toString('base64url');
  if (!env.CURSOR_SECRET) {
    logger.warn('CURSOR_SECRET is not set: using a random secret, so cursors die with this process and are not shared between instances');
  }
  const stores = createListingStores(config.stores, env.UPSTREAM_TIMEOUT_MS);
  // Without insights configured no identity is ever signed; the random secret only fills the slot.
  const identitySecret = env.INSIGHTS_IDENTITY_SECRET ? Buffer.from(env.INSIGHTS_IDENTITY_SECRET, 'base64url') : randomBytes(32);
  const insights = createInsightsUpstream(config.insightsUpstream, env.UPSTREAM_TIMEOUT_MS, createIdentitySigner(identitySecret));
  const refusedAuth = createRefusedAuthBudget(config.refusedAuthPerMinute ?? DEFAULT_REFUSED_AUTH_PER_MINUTE, config.refusedAuthTracked);
  const { usage, webhooks } = deps.usageAndWebhooks;
  if (webhooks) deps.metrics.watchWebhookBacklog(() => webhooks.queue.backlog());
  const app = createGateway({
    ...(deps.tracing ? { tracer: deps.tracing.requestTracer } : {}),
    refusedAuth,
    logger,
    metrics: deps.metrics,
    keyStore: deps.keyStore,
    counters: deps.counters,
    cursors: createCursorCodec({ encryptionSecret: cursorSecret, previousSecrets: env.CURSOR_PREVIOUS_SECRETS, ttlSeconds: env.CURSOR_TTL_SECONDS }),
    stores,
    insights,
    trustedProxies: env.TRUST_PROXY,
    ...(usage ? { usage } : {}),
    ...(webhooks ? { quotaWatcher: webhooks.watcher } : {}),
  });
  return { app, stores, insights, refusedAuth, close: () => Promise.all([stores.close(), insights.close(), deps.tracing?.shutdown(2_000)]) };
}

export interface PublicListenerDeps {
  readonly logger: Logger;
  readonly readiness: InstanceReadiness;
  readonly keys: KeyStores;
  readonly redis?: SharedRedis;
  readonly sharedCounters?: ResilientCounters;
}

/** The public listener; readiness gets its sources now and says "serving" once it listens. */
export function startPublicListener(env: Env, serving: Serving, deps: PublicListenerDeps): Server {
  const { logger, readiness, redis } = deps;
  const server = createServer(serving.app, { logger, writeStallTimeoutMs: env.WRITE_STALL_TIMEOUT_MS });
  // A worker's listening line is its own; the primary says "listening" once every worker does.
  const fields = { key_store: env.KEY_STORE, counters: redis ? `redis ${redis.topology.kind}` : 'memory' };
  listen(server, env.PORT, env.HOST, logger, isWorker() ? 'worker listening' : 'listening', { fields });
  readiness.attach({
    keys: () => deps.keys.redisStore?.state() ?? 'ok',
    stores: serving.stores,
    ...(redis ? { redis: redis.client, redisRefusal: () => redis.health.refusal(), counting: () => deps.sharedCounters!.state() } : {}),
  });
  server.once('listening', () => readiness.setPhase('serving'));
  if (isWorker()) server.once('listening', () => announceListening((server.address() as AddressInfo).port));
  return server;
}
