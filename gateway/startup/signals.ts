/**
 * The process's signals, caught from the moment main.ts is loaded (its first import). Until the
 * reloads exist, a SIGHUP is logged and remembered: one reload runs as soon as they do (the files
 * may have changed after start-up read them). Until the graceful stop exists, SIGTERM or SIGINT
 * ends start-up with one line and exit 0. Without this, node's default for SIGHUP ends the process
 * (exit 129), and a worker still starting takes the whole gateway down with it.
 */
import type { Logger } from 'pino';

export type SignalHandler = (signal: string) => void;

export interface ProcessSignals {
  /** The logger for lines about signals (until set, such a line is written to stdout as the logger would). */
  useLogger(logger: Logger): void;
  /** From now on SIGHUP calls `reload`; a SIGHUP received before is passed on now, once. */
  onReload(reload: SignalHandler): void;
  /** From now on SIGTERM and SIGINT call `stop`. */
  onStop(stop: SignalHandler): void;
}

function catchSignals(): ProcessSignals {
  let logger: Logger | undefined;
  const info = (signal: string, msg: string): void => {
    if (logger) logger.info({ signal }, msg);
    else process.stdout.write(`${JSON.stringify({ level: 'info', time: Date.now(), service: 'gateway', signal, msg })}\n`);
  };
  let reload: SignalHandler | undefined;
  let stop: SignalHandler | undefined;
  let pendingReload = false;
  process.on('SIGHUP', () => {
    if (reload) return reload('SIGHUP');
    if (!pendingReload) info('SIGHUP', 'reload asked during start-up: it runs once start-up is done');
    pendingReload = true;
  });
  const onStopSignal = (signal: string): void => {
    if (stop) return stop(signal);
    info(signal, 'stopped during start-up, before serving');
    if (logger) logger.flush(() => process.exit(0));
    else process.exit(0);
  };
  process.on('SIGTERM', () => onStopSignal('SIGTERM'));
  process.on('SIGINT', () => onStopSignal('SIGINT'));
  return {
    useLogger(next) {
      logger = next;
    },
    onReload(next) {
      reload = next;
      if (pendingReload) {
        pendingReload = false;
        next('SIGHUP during start-up');
      }
    },
    onStop(next) {
      stop = next;
    },
  };
}

/** This process's signals: caught as this module loads. */
export const processSignals: ProcessSignals = catchSignals();
