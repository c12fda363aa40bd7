import cluster from 'node:cluster';
import type { Logger } from 'pino';
import { AggregatorRegistry, type Registry } from 'prom-client';
import { isPrimaryMessage, type ReadinessAnswer, type ListeningMessage, type WorkerReadiness } from './messages';

/** True in a process forked by the primary of `GATEWAY_WORKERS` > 1. */
export const isWorker = (): boolean => cluster.isWorker;

/**
 * Whether this process serves administration: the admin API, the portal, the providers' listener
 * and the key writer behind them. With GATEWAY_WORKERS > 1 only the admin worker does (the
 * supervisor sets GATEWAY_ADMIN_WORKER); a single process always does.
 */
export const servesAdministration = (env: { readonly GATEWAY_ADMIN_WORKER?: '0' | '1' }): boolean => env.GATEWAY_ADMIN_WORKER !== '0';

/** The worker's logger: every line says which worker wrote it. */
export function workerLogger(logger: Logger): Logger {
  return cluster.isWorker ? logger.child({ worker: cluster.worker!.id }) : logger;
}

/**
 * A worker's side of the channel to its primary, which owns the ops listener: prom-client answers
 * the primary's metrics requests from `registry` (summed there over every worker), and the primary's
 * readiness requests are answered with `readiness()`.
 */
export function answerPrimary(registry: Registry, readiness: () => Promise<WorkerReadiness>, logger: Logger): void {
  // Constructing an AggregatorRegistry installs prom-client's worker-side listener.
  new AggregatorRegistry();
  AggregatorRegistry.setRegistries([registry]);
  process.on('message', (message: unknown) => {
    if (!isPrimaryMessage(message)) return;
    readiness()
      .catch((err: Error): WorkerReadiness => {
        logger.error({ err: err.message }, 'readiness check failed');
        return { ready: false, checks: {} };
      })
      .then((result) => {
        const answer: ReadinessAnswer = { type: 'gateway:readiness-answer', requestId: message.requestId, readiness: result };
        if (process.connected) process.send!(answer);
      });
  });
}

/** Tells the primary that this worker's public listener accepts connections. */
export function announceListening(port: number): void {
  const message: ListeningMessage = { type: 'gateway:listening', port };
  if (process.connected) process.send!(message);
}
