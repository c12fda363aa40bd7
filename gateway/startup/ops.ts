/**
 * Metrics, readiness and the ops listener. The ops listener comes first and stays until the process
 * exits: /readyz answers 503 while starting and while draining, so a load balancer sees a start and
 * a drain, never a refused port. In a worker the primary owns the ops listener: it asks this worker
 * for its metrics and readiness.
 */
import type { Logger } from 'pino';
import type { Env } from '../config/env';
import { createMetrics, type Metrics } from '../ops/metrics';
import { createOpsApp } from '../ops/ops-app';
import { createReadiness, type InstanceReadiness } from '../ops/readiness';
import { createServer } from '../server';
import { answerPrimary, isWorker } from '../workers/worker-side';
import { listen } from './listeners';

export interface Ops {
  readonly metrics: Metrics;
  readonly readiness: InstanceReadiness;
}

export function startOps(env: Env, logger: Logger): Ops {
  const metrics = createMetrics({ redis: env.redis !== undefined, perKey: env.METRICS_KEY_IDS });
  const readiness = createReadiness();
  if (isWorker()) {
    answerPrimary(metrics.registry, () => readiness.check(), logger);
  } else if (env.OPS_PORT !== undefined) {
    const app = createOpsApp({ readiness: () => readiness.check(), metrics: () => metrics.registry.metrics(), metricsContentType: metrics.registry.contentType }, logger);
    listen(createServer(app), env.OPS_PORT, env.OPS_HOST, logger, 'ops listening');
  }
  return { metrics, readiness };
}
