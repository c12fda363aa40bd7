/**
 * Part 7 of the interface as one pure decision: after a failed attempt, wait how long and retry,
 * or give up.
 *
 * - `rate_limited`, `quota_exceeded`: wait `Retry-After` seconds, then retry.
 * - `internal_error`, `not_configured`, `service_unavailable`: retry later, backing off
 *   (and never sooner than `Retry-After` when the answer has one).
 * - A code the client does not know is a failure of its HTTP status: 5xx is retried like
 *   `internal_error`, 429 like `rate_limited`, any other status is final.
 * - Every other code is final: the request, the key or the subscription must change first.
 * - A wait over `maxRetryWaitSeconds` is not waited: the error is thrown at once.
 * - A connection failure or timeout (no answer) is retried like `service_unavailable`.
 */

export type RetryDecision = { readonly retry: true; readonly waitMs: number } | { readonly retry: false; readonly reason: string };

export interface FailedAttempt {
  /** HTTP status, or undefined when no answer came (connection failure, timeout). */
  status?: number;
  /** The answer's error code, when it had one. */
  code?: string;
  /** The answer's `Retry-After`, in seconds. */
  retryAfterSeconds?: number;
  /** 0 for the first retry, 1 for the second… */
  retriesSoFar: number;
}

export interface RetryLimits {
  maxRetries: number;
  maxRetryWaitSeconds: number;
  /** First back-off; it doubles with every retry. */
  baseDelayMs: number;
  /** [0, 1): where in the upper half of the back-off window to wait (jitter). */
  random: () => number;
}

const WAIT_CODES = new Set(['rate_limited', 'quota_exceeded']);
const BACKOFF_CODES = new Set(['internal_error', 'not_configured', 'service_unavailable']);
const FINAL_CODES = new Set([
  'invalid_cursor', 'invalid_parameter', 'unauthenticated', 'country_not_entitled', 'ip_not_allowed',
  'key_paused', 'upgrade_required', 'not_found', 'method_not_allowed',
]);

type Handling = 'wait' | 'backoff' | 'final';

/** How a failure is handled: by its code when the client knows it, else by its HTTP status. */
export function handlingOf(status: number | undefined, code: string | undefined): Handling {
  if (code !== undefined) {
    if (WAIT_CODES.has(code)) return 'wait';
    if (BACKOFF_CODES.has(code)) return 'backoff';
    if (FINAL_CODES.has(code)) return 'final';
  }
  if (status === undefined || status >= 500) return 'backoff';
  if (status === 429) return 'wait';
  return 'final';
}

/** The most a wait on `Retry-After` is lengthened by, to spread clients throttled in the same second. */
export const RETRY_AFTER_JITTER_MS = 1000;

export function decideRetry(failure: FailedAttempt, limits: RetryLimits): RetryDecision {
  const handling = handlingOf(failure.status, failure.code);
  if (handling === 'final') return { retry: false, reason: 'not retryable' };
  if (failure.retriesSoFar >= limits.maxRetries) return { retry: false, reason: `gave up after ${limits.maxRetries} retries` };
  const capMs = limits.maxRetryWaitSeconds * 1000;
  const retryAfterMs = failure.retryAfterSeconds !== undefined ? failure.retryAfterSeconds * 1000 : undefined;
  if (retryAfterMs !== undefined && retryAfterMs > capMs) {
    return { retry: false, reason: `Retry-After ${failure.retryAfterSeconds} s is over the ${limits.maxRetryWaitSeconds} s cap` };
  }
  const window = Math.min(capMs, limits.baseDelayMs * 2 ** failure.retriesSoFar);
  const backoffMs = Math.round(window / 2 + (window / 2) * limits.random());
  // A 429 says when to come back; a 5xx says "later", at least Retry-After and backing off. Retry-After
  // is in whole seconds, so every client throttled in one second would come back in the same one: a
  // little jitter (up to RETRY_AFTER_JITTER_MS, never earlier than Retry-After, never over the cap) spreads them out.
  const afterRetryAfter = retryAfterMs === undefined ? undefined : retryAfterMs + Math.round(Math.min(RETRY_AFTER_JITTER_MS, capMs - retryAfterMs) * limits.random());
  const waitMs = handling === 'wait' ? (afterRetryAfter ?? backoffMs) : Math.max(afterRetryAfter ?? 0, backoffMs);
  return { retry: true, waitMs };
}
