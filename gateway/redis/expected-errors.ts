import type { Logger } from 'pino';

/**
 * True for the errors a Redis outage produces (connection closed or not writable, command timed
 * out, retries exhausted, connection refused or reset): expected while Redis is away, so logged as
 * one line with their message, never with a stack.
 */
export function isExpectedRedisError(err: unknown): boolean {
  const e = err as { name?: unknown; message?: unknown; code?: unknown } | undefined;
  if (!e) return false;
  if (e.name === 'MaxRetriesPerRequestError') return true;
  if (typeof e.code === 'string' && /^(ECONNREFUSED|ECONNRESET|ETIMEDOUT|EPIPE|EHOSTUNREACH|ENOTFOUND)$/.test(e.code)) return true;
  return typeof e.message === 'string' && /Command timed out|Connection is closed|Stream isn't writeable|connect ECONNREFUSED|read ECONNRESET/.test(e.message);
}

/** Replies of a Redis failing over or loading its data: it answers again soon, like one that was away. */
const PASSING_REPLY = /^(CLUSTERDOWN|TRYAGAIN|READONLY|LOADING|MASTERDOWN)\b/;
/** Replies of a Redis refusing this configuration (refusal.ts names the variable to fix; health.ts logs it). */
const REFUSAL_REPLY = /^(NOPERM|MOVED|ASK|CROSSSLOT|NOAUTH|WRONGPASS)\b/;

/**
 * For an operator's request (admin API, console) that failed: when the failure is Redis's, away or
 * failing over (a warning) or refusing this configuration (an error), logs one line with the
 * error's message and no stack, and returns true: the caller answers 503 `service_unavailable`.
 * False for any other error (a bug: the caller logs it and answers 500).
 */
export function logRedisFailure(err: unknown, logger: Logger, msg: string): boolean {
  const message = String((err as { message?: unknown } | undefined)?.message);
  if (isExpectedRedisError(err) || PASSING_REPLY.test(message)) {
    logger.warn({ reason: 'redis_unavailable', err: message }, `${msg}: Redis unavailable`);
    return true;
  }
  if (REFUSAL_REPLY.test(message)) {
    logger.error({ reason: 'redis_refused', err: message }, `${msg}: Redis refuses this configuration`);
    return true;
  }
  return false;
}
