import type { Logger } from 'pino';
import type { Express } from 'express';
import { AggregatorRegistry } from 'prom-client';
import { ApiError } from '../errors';
import { createOpsApp } from '../ops/ops-app';
import type { WorkerReadiness } from './messages';
import type { Supervisor } from './supervisor';

/**
 * The primary's readiness: 503 while the workers start and while draining; after that 200 while at
 * least one worker listens and says it is ready (connections go only to listening workers, so the
 * instance answers while one does: a worker being replaced does not take the machine out of the
 * load balancer). The body has the checks of a worker (one that is not ready, if any) and each
 * worker's state.
 */
export async function primaryReadiness(supervisor: Supervisor): Promise<WorkerReadiness> {
  if (supervisor.stopping) return { ready: false, status: 'draining', checks: { workers: 'draining' } };
  const states = supervisor.workers();
  const answers = await supervisor.readiness();
  const workers: Record<string, string> = {};
  let sample: WorkerReadiness | undefined;
  let anyReady = false;
  for (const worker of states) {
    const answer = answers.get(worker.id);
    const state = !worker.listening ? 'starting' : answer === undefined ? 'unavailable' : answer.ready ? 'ok' : 'not_ready';
    workers[`worker_${worker.id}`] = state;
    if (state === 'ok') anyReady = true;
    if (answer && (!sample || (sample.ready && !answer.ready))) sample = answer;
  }
  const ready = supervisor.startedOnce && anyReady;
  const status = !supervisor.startedOnce ? 'starting' : anyReady ? 'serving' : (sample?.status ?? 'starting');
  return { ready, status, checks: { ...(sample?.checks ?? {}), workers } };
}

/**
 * The ops listener of `GATEWAY_WORKERS` > 1, in the primary: the ops app of a single process
 * (gateway/ops/ops-app.ts), with `/metrics` summed over every worker by prom-client's
 * AggregatorRegistry (counters and histograms added; gauges as each metric's aggregator says) and
 * `/readyz` from the workers' readiness.
 */
export function createPrimaryOpsApp(supervisor: Supervisor, logger: Logger): Express {
  const aggregator = new AggregatorRegistry();
  return createOpsApp({
    readiness: () => primaryReadiness(supervisor),
    // A worker that does not answer within prom-client's 5 s fails the whole scrape: 503, not a partial sum.
    metrics: () =>
      aggregator.clusterMetrics().catch(() => {
        throw new ApiError('service_unavailable');
      }),
    metricsContentType: aggregator.contentType,
  }, logger);
}
