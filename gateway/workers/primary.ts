import { randomBytes } from 'node:crypto';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { availableParallelism } from 'node:os';
import type { Logger } from 'pino';
import type { Env } from '../config/env';
import { createServer } from '../server';
import { createPrimaryOpsApp } from './primary-ops';
import { superviseWorkers } from './supervisor';

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
export function runPrimary(env: Env, logger: Logger): void {
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
    const opsServer = ops;
    opsServer.listen(env.OPS_PORT, env.OPS_HOST, () => {
      const address = opsServer.address() as AddressInfo;
      logger.info({ port: address.port, host: address.address }, 'ops listening');
    });
    opsServer.on('error', (err) => {
      logger.fatal({ err }, 'cannot listen (ops listening)');
      void supervisor.stop().then(() => logger.flush(() => process.exit(1)));
    });
  }

  supervisor.started.then(
    (port) => logger.info({ port, host: env.HOST, workers: count, key_store: env.KEY_STORE, counters: env.redis ? `redis ${env.redis.kind}` : 'memory' }, 'listening'),
    (code: number) => {
      // The worker that failed has printed the one line that says why.
      ops?.close();
      logger.flush(() => process.exit(code));
    },
  );

  process.on('SIGHUP', () => {
    logger.info({ signal: 'SIGHUP' }, 'reload: signal passed to every worker');
    supervisor.signal('SIGHUP');
  });

  let stopping = false;
  const stop = (signal: string): void => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down: draining every worker');
    // Each worker drains its in-flight requests (bounded) and exits; the ops listener stays up
    // meanwhile and answers /readyz 503.
    void supervisor.stop().then(() => {
      ops?.close();
      ops?.closeAllConnections();
      logger.info('stopped');
      logger.flush(() => process.exit(0));
    });
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}
