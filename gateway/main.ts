import { randomBytes } from 'node:crypto';
import type { Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import { createAdminApp } from './admin/admin-app';
import { createGateway } from './app';
import { ConfigError } from './config/config-error';
import { ApiError } from './errors';
import { parseEnv, type Env } from './config/env';
import { DEFAULT_QUOTA_THRESHOLDS, DEFAULT_REFUSED_AUTH_PER_MINUTE, loadGatewayConfig, type GatewayConfig } from './config/gateway-config';
import { createReloader } from './config/reloader';
import { createCursorCodec } from './cursor/cursor-codec';
import { createFileKeyStore, type FileKeyStore } from './keys/file-key-store';
import { createKeyAdmin } from './keys/key-admin';
import type { KeyStore } from './keys/key-record';
import { watchDemoKeys } from './keys/demo-key-watch';
import { watchKeyStoreEpoch } from './keys/key-store-epoch';
import type { FileKey } from './keys/keys-file';
import { loadKeysFileOffThread } from './keys/keys-file-loader';
import { createRedisKeyStore, type RedisKeyStore } from './keys/redis-key-store';
import { redisKeys } from './keys/redis-layout';
import type { Counters } from './limits/counters';
import { createMemoryCounters } from './limits/memory-counters';
import { createRedisCounters } from './limits/redis-counters';
import { createResilientCounters, type ResilientCounters } from './limits/resilient-counters';
import { createLogger } from './logging';
import { createMetrics } from './ops/metrics';
import { createOpsApp } from './ops/ops-app';
import { createReadiness } from './ops/readiness';
import type { Express } from 'express';
import { recordReload } from './audit/file-reload-audit';
import { createMemoryAuditLog } from './audit/memory-audit-log';
import { createConsoleRouter } from './console/console-app';
import { createConsoleOnlyApp } from './console/console-only-app';
import type { ConsoleStore } from './console/console-store';
import { fileConsoleStore } from './console/file-console-store';
import { redisConsoleStore } from './console/console-store';
import { createMemorySessionStore } from './console/sessions';
import { createOperatorRegistry, loadOperatorTokens, type OperatorTokenEntry } from './operators/operator-tokens';
import { connectRedis, type RedisClient } from './redis/connect';
import { createRedisHealth } from './redis/health';
import { checkAtStartup } from './redis/startup-check';
import { createSubscriber, type Subscriber } from './redis/subscriber';
import { createRefusedAuthBudget } from './policies/refused-auth-budget';
import { createServer } from './server';
import { createIdentitySigner } from './upstream/caller-identity';
import { createInsightsUpstream } from './upstream/insights-client';
import { runPrimary, workerCount } from './workers/primary';
import { announceListening, answerPrimary, isWorker, workerLogger } from './workers/worker-side';
import { createListingStores } from './upstream/listing-stores';
import { createMemoryUsageStore } from './usage/memory-usage-store';
import { createRedisUsageStore } from './usage/redis-usage-store';
import { createUsageRecorder } from './usage/usage-recorder';
import { createUsageRoutes, USAGE_PATHS } from './usage/usage-routes';
import { createKeyEventSink } from './webhooks/key-events';
import { redisDeadLetters } from './webhooks/redis-webhook-queue';
import { startWebhooks } from './webhooks/start-webhooks';
import { createWebhookRoutes, WEBHOOK_PATHS } from './webhooks/webhook-routes';
import { addDays, dayOf } from './usage/usage-dates';
import { dailyUsage, monthlyReport, reportCsv } from './usage/usage-reports';

/** In-flight requests get this long to finish after SIGTERM. */
const SHUTDOWN_GRACE_MS = 10_000;
/** Start-up waits this long for Redis before serving anyway (degraded: /readyz says so). */
const REDIS_STARTUP_WAIT_MS = 3_000;
/** Console sessions end this long after sign-in (kept in memory: a restart signs everyone out). */
const CONSOLE_SESSION_TTL_MS = 8 * 3600_000;
/** Command timeout of the admin API's Redis connection (as the keys CLI's). */
const ADMIN_COMMAND_TIMEOUT_MS = 5_000;

/** The insights service verifies the caller identity the gateway signs: no area without a secret. */
function requireInsightsSecret(env: Env, config: GatewayConfig): void {
  if (config.insightsUpstream && !env.INSIGHTS_IDENTITY_SECRET) {
    throw new ConfigError(`environment variable INSIGHTS_IDENTITY_SECRET: required when ${env.GATEWAY_CONFIG} sets insights.upstream (base64url of 32 bytes, shared with the insights service)`);
  }
}

/** Reads and validates the configuration; a problem exits 1 with one line naming file, entry, field. */
function loadConfiguration(): { env: Env; gatewayConfig: GatewayConfig; fileKeys?: FileKey[]; operatorTokens: OperatorTokenEntry[] } {
  try {
    const env = parseEnv();
    const gatewayConfig = loadGatewayConfig(env.GATEWAY_CONFIG, env.BACKEND_URL);
    requireInsightsSecret(env, gatewayConfig);
    const fileKeys = env.KEY_STORE === 'file' ? loadKeysFileOffThread(env.KEYS_FILE, gatewayConfig) : undefined;
    const operatorTokens = env.ADMIN_TOKENS_FILE ? loadOperatorTokens(env.ADMIN_TOKENS_FILE, env.ADMIN_TOKEN ? ['admin'] : []) : [];
    return { env, gatewayConfig, ...(fileKeys ? { fileKeys } : {}), operatorTokens };
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    process.stderr.write(`config error: ${err.message}\n`);
    process.exit(1);
  }
}

function listen(server: Server, port: number, host: string, logger: Logger, message: string, fields: object = {}): void {
  server.listen(port, host, () => {
    const address = server.address() as AddressInfo;
    logger.info({ ...fields, port: address.port, host: address.address }, message);
  });
  server.on('error', (err) => {
    logger.fatal({ err }, `cannot listen (${message})`);
    logger.flush(() => process.exit(1));
  });
}

/** Start-up: configuration, dependencies, app, listeners; reload on change or SIGHUP; a graceful stop on SIGTERM. */
async function main(): Promise<void> {
  const { env, gatewayConfig, fileKeys, operatorTokens } = loadConfiguration();
  // GATEWAY_WORKERS > 1: this process supervises the workers (gateway/workers/), each of which runs the rest of main().
  if (!isWorker() && workerCount(env) > 1) return runPrimary(env, createLogger(env.LOG_LEVEL));
  const logger = workerLogger(createLogger(env.LOG_LEVEL));
  const metrics = createMetrics({ redis: env.redis !== undefined, perKey: env.METRICS_KEY_IDS });
  // The ops listener comes first and stays until the process exits: /readyz answers 503 while
  // starting and while draining, so a load balancer sees a start and a drain, never a refused port.
  // In a worker the primary owns the ops listener: it asks this worker for its metrics and readiness.
  const readiness = createReadiness();
  if (isWorker()) answerPrimary(metrics.registry, () => readiness.check(), logger);
  else if (env.OPS_PORT !== undefined) listen(createServer(createOpsApp({ readiness: () => readiness.check(), metrics: () => metrics.registry.metrics(), metricsContentType: metrics.registry.contentType }, logger)), env.OPS_PORT, env.OPS_HOST, logger, 'ops listening');
  const topology = env.redis;
  const health = topology ? createRedisHealth(topology, logger) : undefined;
  const redisClients: Array<RedisClient | Subscriber> = [];
  const connect = (role: string, autoPipelining = true, commandTimeoutMs = env.REDIS_COMMAND_TIMEOUT_MS): RedisClient => {
    const client = connectRedis(topology!, logger, role, { commandTimeoutMs, autoPipelining, health: health! });
    redisClients.push(client);
    return client;
  };

  const memoryCounters = createMemoryCounters();
  let counters: Counters = memoryCounters;
  let sharedCounters: ResilientCounters | undefined;
  let redis: RedisClient | undefined;
  if (topology) {
    redis = connect('commands');
    redis.on('ready', () => metrics.redisUp.set(1));
    redis.on('close', () => metrics.redisUp.set(0));
    metrics.redisUp.set(0);
    // Only a cluster client retries a command internally before writing it (deadline.ts): elsewhere
    // the client's own command timeout already bounds every call.
    const deadlineMs = topology.kind === 'cluster' ? env.REDIS_COMMAND_TIMEOUT_MS : undefined;
    const redisCounters = createRedisCounters(redis, deadlineMs ? { deadlineMs } : {});
    counters = sharedCounters = createResilientCounters(redisCounters, memoryCounters, redis, logger, health!);
    const probeLimits = { perMinute: 1, perDay: 1, perMonth: 1 };
    const probe = (): Promise<unknown> => Promise.all([redisCounters.peek('startup-probe', probeLimits), ...(env.KEY_STORE === 'redis' ? [redis!.get(redisKeys.ids)] : [])]);
    const outcome = await checkAtStartup(redis, topology, health!, probe, REDIS_STARTUP_WAIT_MS);
    if (outcome.kind === 'refused') {
      process.stderr.write(`config error: environment variable ${outcome.line}\n`);
      process.exit(1);
    }
    if (outcome.kind === 'away') logger.warn('redis not reachable at start-up: counting per instance until it is');
  }
  let fileStore: FileKeyStore | undefined;
  let redisStore: RedisKeyStore | undefined;
  let keyStore: KeyStore;
  if (fileKeys) {
    keyStore = fileStore = createFileKeyStore(fileKeys);
  } else {
    const epoch = watchKeyStoreEpoch(redis!, logger, { onChange: (health) => metrics.keyStoreLost.set(health === 'lost' ? 1 : 0) });
    const subscriber = createSubscriber(topology!, redis!, logger, health!);
    redisClients.push(subscriber);
    keyStore = redisStore = createRedisKeyStore(redis!, subscriber, gatewayConfig, logger, {
      onLookup: (result) => metrics.tally.keyCache.add(result),
      onError: (err) => health!.report(err),
      epoch,
      // Two reads (pointer, record), each bounded by the command timeout.
      ...(topology!.kind === 'cluster' ? { deadlineMs: 2 * env.REDIS_COMMAND_TIMEOUT_MS } : {}),
    });
  }

  // Usage history: in Redis when there is one (shared, durable), else in this process's memory.
  // Its own connection with a longer timeout: flushes are off the request's way, and a timed-out
  // increment is dropped rather than risk counting twice.
  const usageStore = redis ? createRedisUsageStore(connect('usage', true, ADMIN_COMMAND_TIMEOUT_MS)) : createMemoryUsageStore();
  const usage = env.USAGE_HISTORY === 'on' ? createUsageRecorder(usageStore, { flushMs: env.USAGE_FLUSH_MS, logger }) : undefined;

  // Quota notifications and key events, signed per Standard Webhooks: durable in Redis, else in memory (best effort).
  const webhooks = env.WEBHOOK_URL
    ? startWebhooks(
        {
          url: env.WEBHOOK_URL,
          secret: env.WEBHOOK_SECRET!,
          timeoutMs: env.WEBHOOK_TIMEOUT_MS,
          retryBaseMs: env.WEBHOOK_RETRY_BASE_MS,
          retryMaxMs: env.WEBHOOK_RETRY_MAX_MS,
          giveUpAfterMs: env.WEBHOOK_GIVE_UP_AFTER_MS,
          concurrency: env.WEBHOOK_CONCURRENCY,
          pollMs: env.WEBHOOK_POLL_MS,
          deadLetters: { maxCount: env.WEBHOOK_DEAD_MAX, maxAgeMs: env.WEBHOOK_DEAD_MAX_AGE_MS },
          thresholds: gatewayConfig.quotaThresholds ?? DEFAULT_QUOTA_THRESHOLDS,
        },
        logger,
        redis ? { commands: connect('webhooks', false, ADMIN_COMMAND_TIMEOUT_MS), waiting: connect('webhooks-wait', false, env.WEBHOOK_POLL_MS + 5_000) } : undefined,
      )
    : undefined;

  const cursorSecret = env.CURSOR_SECRET ?? randomBytes(32).toString('base64url');
  if (!env.CURSOR_SECRET) {
    logger.warn('CURSOR_SECRET is not set: using a random secret, so cursors die with this process and are not shared between instances');
  }
  const stores = createListingStores(gatewayConfig.stores, env.UPSTREAM_TIMEOUT_MS);
  // Without insights configured no identity is ever signed; the random secret only fills the slot.
  const identitySecret = env.INSIGHTS_IDENTITY_SECRET ? Buffer.from(env.INSIGHTS_IDENTITY_SECRET, 'base64url') : randomBytes(32);
  const insights = createInsightsUpstream(gatewayConfig.insightsUpstream, env.UPSTREAM_TIMEOUT_MS, createIdentitySigner(identitySecret));
  const refusedAuth = createRefusedAuthBudget(gatewayConfig.refusedAuthPerMinute ?? DEFAULT_REFUSED_AUTH_PER_MINUTE);
  const gateway = createGateway({
    refusedAuth,
    logger,
    metrics,
    keyStore,
    counters,
    cursors: createCursorCodec({ encryptionSecret: cursorSecret, previousSecrets: env.CURSOR_PREVIOUS_SECRETS, ttlSeconds: env.CURSOR_TTL_SECONDS }),
    stores,
    insights,
    trustedProxies: env.TRUST_PROXY,
    ...(usage ? { usage } : {}),
    ...(webhooks ? { quotaWatcher: webhooks.watcher } : {}),
  });

  // The admin connection waits longer than the hot path's: a write that times out on the caller
  // may still be applied, and the operator would be told it failed (the CLI waits as long).
  const adminOn = env.ADMIN_TOKEN !== undefined || env.ADMIN_TOKENS_FILE !== undefined;
  const adminRedis = adminOn && redisStore ? connect('admin', false, ADMIN_COMMAND_TIMEOUT_MS) : undefined;
  const keyAdmin = adminRedis
    ? createKeyAdmin(adminRedis, gatewayConfig, logger, { maxEntries: env.AUDIT_MAX_ENTRIES, days: env.AUDIT_RETENTION_DAYS }, createKeyEventSink(adminRedis, logger))
    : undefined;

  const fileAudit = createMemoryAuditLog();
  let currentFileKeys: readonly FileKey[] = fileKeys ?? [];
  // Hot reload: the gateway config always, the keys file when it is the key store.
  const reloader = createReloader(
    fileStore ? [env.GATEWAY_CONFIG, env.KEYS_FILE] : [env.GATEWAY_CONFIG],
    () => {
      const nextConfig = loadGatewayConfig(env.GATEWAY_CONFIG, env.BACKEND_URL);
      requireInsightsSecret(env, nextConfig);
      const nextKeys = fileStore ? loadKeysFileOffThread(env.KEYS_FILE, nextConfig) : undefined;
      return () => {
        if (nextKeys) {
          fileStore!.replace(nextKeys);
          // With the keys file, a reload is the change: what it added, changed or removed is audited.
          recordReload(fileAudit, { name: `file:${env.KEYS_FILE}`, channel: 'keys_file' }, currentFileKeys, nextKeys);
          currentFileKeys = nextKeys;
        }
        redisStore?.updateConfig(nextConfig);
        keyAdmin?.updateConfig(nextConfig);
        webhooks?.watcher.update(nextConfig.quotaThresholds ?? DEFAULT_QUOTA_THRESHOLDS);
        stores.update(nextConfig.stores);
        const budget = nextConfig.refusedAuthPerMinute ?? DEFAULT_REFUSED_AUTH_PER_MINUTE;
        if (budget !== refusedAuth.perMinute) refusedAuth.update(budget);
        insights.update(nextConfig.insightsUpstream);
      };
    },
    logger,
    (applied) => metrics.reloads.inc({ result: applied ? 'applied' : 'refused' }),
  );
  // Operator tokens reload on their own: a broken tokens file must not hold back a keys-file change.
  const operators = createOperatorRegistry(env.ADMIN_TOKEN, operatorTokens);
  const tokensFile = env.ADMIN_TOKENS_FILE;
  const tokensReloader = tokensFile
    ? createReloader([tokensFile], () => {
        const next = loadOperatorTokens(tokensFile, env.ADMIN_TOKEN ? ['admin'] : []);
        return () => operators.replace(next);
      }, logger.child({ file: 'ADMIN_TOKENS_FILE' }))
    : undefined;
  process.on('SIGHUP', () => {
    reloader.reload('SIGHUP');
    tokensReloader?.reload('SIGHUP');
  });
  // Demo keys (values in the README) on a gateway reachable beyond this machine: warned, by id.
  const demoWatch = watchDemoKeys(env.HOST, logger, fileStore ? { file: fileStore } : { redis: redis! });

  const servers: Server[] = [];
  const server = createServer(gateway, { logger, writeStallTimeoutMs: env.WRITE_STALL_TIMEOUT_MS });
  servers.push(server);
  // A worker's listening line is its own; the primary says "listening" once every worker does.
  listen(server, env.PORT, env.HOST, logger, isWorker() ? 'worker listening' : 'listening', { key_store: env.KEY_STORE, counters: topology ? `redis ${topology.kind}` : 'memory' });
  readiness.attach({
    keys: () => redisStore?.state() ?? 'ok',
    stores,
    ...(redis ? { redis, redisRefusal: () => health!.refusal(), counting: () => sharedCounters!.state() } : {}),
  });
  server.once('listening', () => readiness.setPhase('serving'));
  if (isWorker()) server.once('listening', () => announceListening((server.address() as AddressInfo).port));
  // With GATEWAY_WORKERS > 1 one worker serves the admin listener (gateway/workers/supervisor.ts).
  if (adminOn && env.GATEWAY_ADMIN_WORKER !== '0') {
    const usageViews = {
      history: (id: string, days: number) => {
        const to = dayOf(Date.now());
        return dailyUsage(usageStore, id, addDays(to, 1 - days), to);
      },
      report: (month: string) => monthlyReport(usageStore, month),
      reportCsv,
    };
    const consoleRouter = (store: ConsoleStore) => createConsoleRouter({
      store,
      operators,
      sessions: createMemorySessionStore(CONSOLE_SESSION_TTL_MS),
      sessionTtlMs: CONSOLE_SESSION_TTL_MS,
      logger,
    });
    let adminApp: Express;
    if (keyAdmin) {
      const keyExists = (id: string): Promise<boolean> =>
        keyAdmin.show(id).then(
          () => true,
          (err: unknown) => {
            if (err instanceof ApiError && err.code === 'not_found') return false;
            throw err;
          },
        );
      const usageRoutes = createUsageRoutes(usageStore, keyExists);
      const store = redisConsoleStore(keyAdmin, `the Redis key store at ${topology!.where}`, usageViews);
      // Dead letters live in Redis (the admin API needs it), whether or not this instance delivers.
      const webhookRoutes = createWebhookRoutes(redisDeadLetters(adminRedis!));
      adminApp = createAdminApp(keyAdmin, operators, logger, {
        routers: [usageRoutes, webhookRoutes],
        methods: { ...USAGE_PATHS, ...WEBHOOK_PATHS },
        console: consoleRouter(store),
        allowedHosts: [env.ADMIN_HOST, ...env.ADMIN_ALLOWED_HOSTS],
      });
    } else {
      // The keys file is the store: the console alone, read-only, on the admin listener.
      adminApp = createConsoleOnlyApp(consoleRouter(fileConsoleStore({
        file: env.KEYS_FILE, keys: () => currentFileKeys, counters, audit: fileAudit, usage: usageViews,
      })), { allowedHosts: [env.ADMIN_HOST, ...env.ADMIN_ALLOWED_HOSTS], logger });
    }
    const admin = createServer(adminApp);
    servers.push(admin);
    listen(admin, env.ADMIN_PORT, env.ADMIN_HOST, logger, 'admin api listening');
  }

  // SIGTERM: stop accepting, let in-flight requests finish (bounded), close upstream and Redis, exit 0.
  let stopping = false;
  const stop = (signal: string): void => {
    if (stopping) return;
    stopping = true;
    readiness.setPhase('draining');
    logger.info({ signal }, 'shutting down');
    reloader.close();
    demoWatch.close();
    tokensReloader?.close();
    // Answers from now on close their connection, and connections left idle are closed as they become so.
    // Prepended: it must run before the app, which may answer synchronously.
    for (const s of servers) {
      s.prependListener('request', (_req, res: ServerResponse) => {
        if (!res.headersSent) res.setHeader('Connection', 'close');
      });
    }
    const sweep = setInterval(() => servers.forEach((s) => s.closeIdleConnections()), 50);
    const force = setTimeout(() => servers.forEach((s) => s.closeAllConnections()), SHUTDOWN_GRACE_MS).unref();
    Promise.all(
      servers.map(
        (s) =>
          new Promise<void>((resolve) => {
            s.close(() => resolve());
            s.closeIdleConnections();
          }),
      ),
    )
      .then(() => Promise.all([stores.close(), insights.close(), usage?.close(), webhooks?.close()]))
      .then(() => Promise.all(redisClients.map((c) => c.quit().catch(() => c.disconnect()))))
      .finally(() => {
        clearInterval(sweep);
        clearTimeout(force);
        logger.info('stopped');
        logger.flush(() => process.exit(0));
      });
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

void main();
