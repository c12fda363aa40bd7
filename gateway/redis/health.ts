import type { Logger } from 'pino';
import type { RedisTopology } from '../config/redis-env';
import { refusalOf } from './refusal';

/**
 * Whether the shared Redis refuses this instance's configuration (as opposed to being away).
 * A refusal is a configuration error: never an outage to count through per instance.
 */
export interface RedisHealth {
  /** The one-line reason Redis refuses this configuration now, or undefined. */
  refusal(): string | undefined;
  /** Any error of a command or connection; returns its refusal line when it is one. */
  report(err: unknown): string | undefined;
  /** A connection became ready (authenticated, TLS verified): connection-level refusals are over. */
  connected(): void;
  /** Tells `listener` of the first refusal after a time without one (start-up waits on it). */
  onRefusal(listener: (line: string) => void): void;
}

/** A refusal met by a command (ACL, MOVED) is reported for at least this long after the last one. */
const COMMAND_REFUSAL_HOLD_MS = 5000;

/**
 * Refusals come two ways. A connection refused (credentials, TLS) keeps the client from becoming
 * ready: it lasts until a connection is ready again. A command refused (NOPERM, MOVED, CROSSSLOT)
 * on a ready connection may concern some keys only: it lasts until none has been met for
 * COMMAND_REFUSAL_HOLD_MS, so readiness does not flap between keys that work and keys that do not.
 * Logged as an error once when a refusal begins or changes, not per request.
 */
export function createRedisHealth(topology: RedisTopology, logger: Logger): RedisHealth {
  let connectionRefusal: string | undefined;
  let commandRefusal: string | undefined;
  let commandRefusalUntil = 0;
  let logged: string | undefined;
  const listeners: Array<(line: string) => void> = [];

  const current = (): string | undefined => connectionRefusal ?? (Date.now() < commandRefusalUntil ? commandRefusal : undefined);

  return {
    refusal: current,
    report(err) {
      const refusal = refusalOf(err, topology);
      if (refusal === undefined) return undefined;
      const { line } = refusal;
      const wasRefused = current() !== undefined;
      if (refusal.during === 'connect') connectionRefusal = line;
      else {
        commandRefusal = line;
        commandRefusalUntil = Date.now() + COMMAND_REFUSAL_HOLD_MS;
      }
      if (logged !== line) {
        logged = line;
        logger.error({ reason: 'redis_refused' }, `Redis refuses this configuration, answering 503 where counting is needed: ${line}`);
      }
      if (!wasRefused) for (const listener of listeners) listener(line);
      return line;
    },
    connected() {
      if (connectionRefusal !== undefined) logger.info('Redis accepts this configuration again');
      connectionRefusal = undefined;
      if (current() === undefined) logged = undefined;
    },
    onRefusal(listener) {
      listeners.push(listener);
    },
  };
}

