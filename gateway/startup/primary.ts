import { randomBytes } from 'node:crypto';
import type { Server } from 'node:http';
import { availableParallelism } from 'node:os';
import type { Logger } from 'pino';
import type { Env } from '../config/env';
import { createServer } from '../server';
import { listen } from './listeners';
import { exitAfterFlush, stopOnSignals } from './shutdown';
import type { ProcessSignals } from './signals';
import { createPrimaryOpsApp } from '../workers/primary-ops';
import { superviseWorkers } from '../workers/supervisor';

/** `GATEWAY_WORKERS` as a number: `auto` is one per core this process may use. */
export function workerCount(env: Pick<Env, 'GATEWAY_WORKERS'>): number {
  return env.GATEWAY_WORKERS === 'auto' ? availableParallelism() : env.GATEWAY_WORKERS;
}

/**
 * The primary of `GATEWAY_WORKERS` > 1 (node's cluster module: the workers share the public and
 * admin ports, connections handed out round-robin). It serves no request itself. It owns what must
 * be one per instance: the cursor secret when none is configured, the ops listener (metrics summed
 * over the workers, readiness from theirs), and the signals: SIGHUP and SIGTERM reach every worker,
 * and a worker that dies is replaced. The configuration was validated before this runs, so a bad one
 * has already stopped start-up with its one line.
 */
export function runPrimary(env: Env, signals: ProcessSignals, logger: Logger): void {
  signals.useLogger(logger);
  const count = workerCount(env);
  const workerEnv: Record<string, string> = {};
  if (!env.CURSOR_SECRET) {
    // Made here, once, and handed to every worker: a cursor from one worker must open on another.
    workerEnv.CURSOR_SECRET = randomBytes(32).toString('base64url');
    logger.warn('CURSOR_SECRET is not set: the workers share a random secret, so cursors die with this process and are not shared with other instances');
  }
  logger.info({ workers: count }, 'starting workers');
  const supervisor = superviseWorkers(count, workerEnv, logger);

  let ops: Server | undefined;
  if (env.OPS_PORT !== undefined) {
    ops = createServer(createPrimaryOpsApp(supervisor, logger));
    listen(ops, env.OPS_PORT, env.OPS_HOST, logger, 'ops listening', { beforeExit: () => supervisor.stop() });
  }

  supervisor.started.then(
    (port) => logger.info({ port, host: env.HOST, workers: count, key_store: env.KEY_STORE, counters: env.redis ? `redis ${env.redis.kind}` : 'memory' }, 'listening'),
    (code: number) => {
      // The worker that failed has printed the one line that says why.
      ops?.close();
      exitAfterFlush(logger, code);
    },
  );

  signals.onReload(() => {
    logger.info({ signal: 'SIGHUP' }, 'reload: signal passed to every worker');
    supervisor.signal('SIGHUP');
  });

  // Each worker drains its in-flight requests (bounded) and exits; the ops listener stays up
  // meanwhile and answers /readyz 503.
  stopOnSignals(signals, logger, 'shutting down: draining every worker', async () => {
    await supervisor.stop();
    ops?.close();
    ops?.closeAllConnections();
  });
}
