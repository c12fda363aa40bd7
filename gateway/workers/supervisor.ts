// gateway/workers/: GATEWAY_WORKERS > 1: the primary's supervision of the workers, its summed ops listener,
// the messages between them, and the worker's side.
import cluster, { type Worker } from 'node:cluster';
import type { Logger } from 'pino';
import { isWorkerMessage, type ReadinessRequest, type WorkerReadiness } from './messages';

/** A replacement for a worker that lived less than this is started after RESTART_DELAY_MS (no crash loop at full speed). */
const SHORT_LIFE_MS = 5_000;
const RESTART_DELAY_MS = 1_000;
/** A worker that has not exited this long after SIGTERM is killed (its own drain is bounded shorter). */
const STOP_DEADLINE_MS = 15_000;
/** How long the primary waits for a worker's readiness answer. */
const READINESS_TIMEOUT_MS = 2_000;

export interface WorkerState {
  readonly id: number;
  readonly pid: number | undefined;
  readonly listening: boolean;
}

export interface Supervisor {
  /** Resolves with the public port once every worker listens; rejects when a worker exits before (start-up failed). */
  readonly started: Promise<number>;
  readonly expected: number;
  workers(): WorkerState[];
  /** Asks every live worker for its readiness. */
  readiness(): Promise<Map<number, WorkerReadiness | undefined>>;
  /** Sends `signal` to every live worker (SIGHUP: reload; a worker still starting gets it once it listens). */
  signal(signal: NodeJS.Signals): void;
  /** SIGTERM to every worker, no replacements; resolves once all have exited. */
  stop(): Promise<void>;
  readonly stopping: boolean;
  /** True once every worker of the first start has listened. */
  readonly startedOnce: boolean;
}

/** The primary's readiness requests to its workers, each answered or given up on after READINESS_TIMEOUT_MS. */
function readinessRequests(): { ask(workers: readonly Worker[]): Promise<Map<number, WorkerReadiness | undefined>>; answered(requestId: number, readiness: WorkerReadiness): void } {
  let nextRequestId = 0;
  const pending = new Map<number, (answer: WorkerReadiness) => void>();
  const askOne = (worker: Worker): Promise<WorkerReadiness | undefined> =>
    new Promise<WorkerReadiness | undefined>((resolve) => {
      const requestId = nextRequestId++;
      const timer = setTimeout(() => {
        pending.delete(requestId);
        resolve(undefined);
      }, READINESS_TIMEOUT_MS);
      pending.set(requestId, (readiness) => {
        clearTimeout(timer);
        pending.delete(requestId);
        resolve(readiness);
      });
      const request: ReadinessRequest = { type: 'gateway:readiness-request', requestId };
      worker.send(request, (err) => {
        if (err) pending.get(requestId)?.({ ready: false, checks: {} });
      });
    });
  return {
    ask: async (workers) => new Map(await Promise.all(workers.map(async (worker) => [worker.id, await askOne(worker)] as const))),
    answered: (requestId, readiness) => pending.get(requestId)?.(readiness),
  };
}

const allWorkers = (): Worker[] => Object.values(cluster.workers ?? {}).filter((w): w is Worker => w !== undefined);

/** Resolves with the public port once every worker listens, rejects with an exit code; the rejection is the caller's to handle. */
function startPromise(): { promise: Promise<number>; resolve(port: number): void; reject(code: number): void } {
  let resolve!: (port: number) => void;
  let reject!: (code: number) => void;
  const promise = new Promise<number>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  // The caller handles the rejection; this keeps an unobserved one from being fatal twice.
  promise.catch(() => undefined);
  return { promise, resolve, reject };
}

/** A worker ended during start-up: one line says how, and the others are stopped. */
function failedStart(worker: Worker, code: number | null, signal: string | null, logger: Logger): void {
  const why = signal ? `ended by ${signal}` : `exited with code ${code}`;
  logger.error({ worker: worker.id, pid: worker.process.pid, code, signal }, `a worker ${why} during start-up: the gateway stops`);
  for (const other of allWorkers()) if (other !== worker) other.process.kill('SIGKILL');
}

/** SIGTERM to every worker (SIGKILL after STOP_DEADLINE_MS); resolves once all have exited. */
function stopWorkers(workers: readonly Worker[]): Promise<void> {
  const stopped = workers.map(
    (worker) =>
      new Promise<void>((resolve) => {
        if (worker.process.exitCode !== null || worker.process.signalCode !== null) return resolve();
        const deadline = setTimeout(() => worker.process.kill('SIGKILL'), STOP_DEADLINE_MS);
        worker.once('exit', () => {
          clearTimeout(deadline);
          resolve();
        });
        worker.process.kill('SIGTERM');
      }),
  );
  return Promise.all(stopped).then(() => undefined);
}

/**
 * Forks `count` workers with `env` added to theirs, and keeps that many running: a worker that
 * dies is logged and replaced. The first worker is started alone: a start-up problem it meets
 * (Redis refusing the configuration, a port in use) is printed once, by it, and the primary exits
 * with its code instead of every worker printing the same line.
 */
export function superviseWorkers(count: number, env: Record<string, string>, logger: Logger): Supervisor {
  const listening = new Set<number>();
  const startedAt = new Map<number, number>();
  let stopping = false;
  let startedOnce = false;
  const readiness = readinessRequests();
  const reloadWhenListening = new Set<number>();

  const { promise: started, resolve: resolveStarted, reject: rejectStarted } = startPromise();

  // One worker serves the admin listener: the console's sessions live in its memory, and a browser's
  // connections handed to different workers would lose them. Its replacement takes the role over.
  let adminWorkerId: number | undefined;
  const fork = (admin = false): Worker => {
    const worker = cluster.fork({ ...env, GATEWAY_ADMIN_WORKER: admin ? '1' : '0' });
    if (admin) adminWorkerId = worker.id;
    startedAt.set(worker.id, Date.now());
    worker.on('message', (message: unknown) => {
      if (!isWorkerMessage(message)) return;
      if (message.type === 'gateway:readiness-answer') return readiness.answered(message.requestId, message.readiness);
      listening.add(worker.id);
      if (reloadWhenListening.delete(worker.id)) worker.process.kill('SIGHUP');
      // The first worker listens: the others are started.
      if (!startedOnce && listening.size === 1) for (let i = 1; i < count; i++) fork();
      if (!startedOnce && listening.size === count) {
        startedOnce = true;
        resolveStarted(message.port);
      } else if (startedOnce) {
        logger.info({ worker: worker.id, pid: worker.process.pid }, 'replacement worker listening');
      }
    });
    worker.on('exit', (code, signal) => {
      listening.delete(worker.id);
      reloadWhenListening.delete(worker.id);
      const lived = Date.now() - (startedAt.get(worker.id) ?? 0);
      startedAt.delete(worker.id);
      if (stopping) return;
      if (!startedOnce) {
        // Start-up failed: a worker that exits on its own has said why; one ended by a signal could not.
        // Stop the others and give its code back.
        stopping = true;
        failedStart(worker, code, signal, logger);
        rejectStarted(code ?? 1);
        return;
      }
      logger.error({ worker: worker.id, pid: worker.process.pid, code, signal }, 'worker exited: starting a replacement');
      const delay = lived < SHORT_LIFE_MS ? RESTART_DELAY_MS : 0;
      const admin = worker.id === adminWorkerId;
      setTimeout(() => void (stopping || fork(admin)), delay);
    });
    return worker;
  };
  fork(true);

  const live = (): Worker[] => allWorkers().filter((w) => w.isConnected());
  return {
    started,
    expected: count,
    get stopping() {
      return stopping;
    },
    get startedOnce() {
      return startedOnce;
    },
    workers: () => live().map((w) => ({ id: w.id, pid: w.process.pid, listening: listening.has(w.id) })),
    readiness: () => readiness.ask(live()),
    signal: (signal) => {
      for (const worker of live()) {
        // A worker still starting reloads once it listens: it may have read the files before the change.
        if (!listening.has(worker.id) && signal === 'SIGHUP') reloadWhenListening.add(worker.id);
        else worker.process.kill(signal);
      }
    },
    stop: () => {
      stopping = true;
      return stopWorkers(allWorkers());
    },
  };
}
