// First: signals are caught from here on (a SIGHUP or SIGTERM while starting must not kill the gateway).
import { processSignals as signals } from './startup/signals';
import { watchDemoKeys } from './keys/demo-key-watch';
import { createLogger } from './logging';
import { defined } from './defined';
import { createOperatorRegistry } from './operators/operator-tokens';
import { adminListener } from './startup/admin-listener';
import { administrationReady, startKeyAdmin } from './startup/key-administration';
import { loadConfiguration } from './startup/configuration';
import { startKeyStore } from './startup/key-store';
import { startOptionalListeners } from './startup/listeners';
import { selfServicePolicy, startHolders } from './startup/holders';
import { startOps } from './startup/ops';
import { startPortalListener } from './startup/portal-listener';
import { hookRoutes, hooksListener, leaksOn, stripeBillingConfig } from './startup/hooks-listener';
import { runPrimary, workerCount } from './startup/primary';
import { startRedisAndCounters } from './startup/redis-and-counters';
import { startReloads } from './startup/reloads';
import { serviceContext } from './startup/service-context';
import { createServing, startPublicListener } from './startup/serving';
import { drainServers, stopOnSignals } from './startup/shutdown';
import { startTracing } from './tracing/start-tracing';
import { startUsageAndWebhooks } from './startup/usage-and-webhooks';
import { isWorker, workerLogger } from './workers/worker-side';

/** In-flight requests get this long to finish after SIGTERM. */
const SHUTDOWN_GRACE_MS = 10_000;

/**
 * Start-up, step by step (each step in gateway/startup/): configuration, ops listener, Redis and
 * counters, key store, usage and webhooks, the public gateway, key administration, reloads on change
 * or SIGHUP, the listeners; a graceful stop on SIGTERM.
 */
async function main(): Promise<void> {
  const { env, gatewayConfig, fileKeys, operatorTokens, portal, hooks, leaks } = await loadConfiguration();
  // GATEWAY_WORKERS > 1: this process supervises the workers (gateway/workers/), each of which runs the rest of main().
  if (!isWorker() && workerCount(env) > 1) return runPrimary(env, signals, createLogger(env.LOG_LEVEL));
  const logger = workerLogger(createLogger(env.LOG_LEVEL));
  signals.useLogger(logger);
  const { metrics, readiness } = startOps(env, logger);
  const { redis, counters, sharedCounters } = await startRedisAndCounters(env, logger, metrics);
  const keys = startKeyStore(env, gatewayConfig, fileKeys, redis, logger, metrics);
  const usageAndWebhooks = startUsageAndWebhooks(env, gatewayConfig, redis, logger);
  const { usageStore, usage, webhooks } = usageAndWebhooks;
  // Traces: loaded only when OTEL_EXPORTER_OTLP_(TRACES_)ENDPOINT is set (config/otel-env.ts).
  const tracing = await startTracing(env.tracing, (count, reason) => metrics.spansDropped.inc({ reason }, count));
  const serving = createServing(env, gatewayConfig, { logger, metrics, keyStore: keys.keyStore, counters, usageAndWebhooks, ...(tracing ? { tracing } : {}) });
  const administration = startKeyAdmin(env, gatewayConfig, redis, keys, logger, portal !== undefined || hooks.stripe !== undefined || leaksOn(hooks));
  await administrationReady(administration, redis);
  const holders = startHolders(keys, administration, logger);
  const selfService = selfServicePolicy(gatewayConfig.selfService);
  const stripeBilling = stripeBillingConfig(gatewayConfig.stripeBilling);
  const operators = createOperatorRegistry(env.ADMIN_TOKEN, operatorTokens);
  const reloads = startReloads(env, { keys, serving, operators, selfService, stripeBilling, ...(administration ? { administration } : {}), ...(webhooks ? { webhooks } : {}) }, signals, logger, metrics);
  // Demo keys (values in the README) on a gateway reachable beyond this machine: warned, by id.
  const demoWatch = watchDemoKeys(env.HOST, logger, keys.file ? { file: keys.file.store } : { redis: redis!.client });

  const servers = [startPublicListener(env, serving, { logger, readiness, keys, ...(redis ? { redis } : {}), ...(sharedCounters ? { sharedCounters } : {}) })];
  // Optional listeners: each started when its port is set, drained on shutdown with the others.
  // The operator and holder listeners share one context.
  const services = serviceContext({ logger, keys, usageStore, counters, administration, holders, redis });
  servers.push(...startOptionalListeners([
    adminListener(env, { ...services, operators }),
    hooksListener(env, hooks, () => hookRoutes(hooks, { logger, keys, leaks, stripeBilling: stripeBilling.current, ...defined({ administration, holders }) }), logger),
  ], logger));
  const portalServer = await startPortalListener(env, portal, { ...services, policy: selfService.current });
  if (portalServer) servers.push(portalServer);

  // SIGTERM: stop accepting, let in-flight requests finish (bounded), close upstream and Redis, exit 0.
  stopOnSignals(signals, logger, 'shutting down', async () => {
    readiness.setPhase('draining');
    reloads.close();
    demoWatch.close();
    await drainServers(servers, SHUTDOWN_GRACE_MS);
    await Promise.all([serving.close(), usage?.close(), webhooks?.close()]);
    await redis?.close();
  });
}

void main();
