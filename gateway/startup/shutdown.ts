/**
 * The graceful stop shared by a single process and the workers' primary: on SIGTERM or SIGINT, once,
 * say so, do the caller's work (drain, close, flush), say "stopped", flush the log, exit 0.
 */
import type { Server, ServerResponse } from 'node:http';
import type { Logger } from 'pino';

/** Exits with `code` once every pending log line is written. */
export function exitAfterFlush(logger: Logger, code: number): void {
  logger.flush(() => process.exit(code));
}

/** On SIGTERM or SIGINT (the first one): `message`, then `work`, then "stopped" and exit 0. */
export function stopOnSignals(signals: { onStop(stop: (signal: string) => void): void }, logger: Logger, message: string, work: (signal: string) => Promise<unknown>): void {
  let stopping = false;
  const stop = (signal: string): void => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, message);
    void work(signal)
      .catch((err: unknown) => logger.error({ err }, 'error while stopping'))
      .finally(() => {
        logger.info('stopped');
        exitAfterFlush(logger, 0);
      });
  };
  signals.onStop(stop);
}

/**
 * Stops accepting on every server and lets in-flight requests finish, at most `graceMs` (then every
 * connection is closed). Answers from now on close their connection, and connections left idle are
 * closed as they become so.
 */
export function drainServers(servers: readonly Server[], graceMs: number): Promise<void> {
  // Prepended: it must run before the app, which may answer synchronously.
  for (const s of servers) {
    s.prependListener('request', (_req, res: ServerResponse) => {
      if (!res.headersSent) res.setHeader('Connection', 'close');
    });
  }
  const sweep = setInterval(() => servers.forEach((s) => s.closeIdleConnections()), 50);
  const force = setTimeout(() => servers.forEach((s) => s.closeAllConnections()), graceMs).unref();
  const closed = servers.map(
    (s) =>
      new Promise<void>((resolve) => {
        s.close(() => resolve());
        s.closeIdleConnections();
      }),
  );
  return Promise.all(closed).then(() => {
    clearInterval(sweep);
    clearTimeout(force);
  });
}
