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
