import type { RequestHandler } from 'express';
import { ApiError } from '../errors';
import type { Counters } from '../limits/counters';
import type { Metrics } from '../ops/metrics';
import { setRateLimitHeaders } from '../limits/ratelimit-headers';

/**
 * Counts the request against the key's per-minute limit and daily and monthly quotas, as one step.
 * Sets `RateLimit-Policy` / `RateLimit`; refuses with 429 `quota_exceeded` or `rate_limited` and
 * `Retry-After`. A refused request is counted nowhere.
 */
export function enforceLimits(counters: Counters, metrics: Metrics): RequestHandler {
  return async function enforceKeyLimits(_req, res, next) {
    const key = res.locals.key!;
    const decision = await counters.consume(key.id, key.limits);
    if (decision.kind === 'unavailable') throw new ApiError('service_unavailable', {}, 1);
    metrics.limitDecisions.inc({ decision: decision.kind === 'allowed' ? 'allowed' : decision.code, store: decision.store ?? 'local' });
    setRateLimitHeaders(res, decision.windows);
    res.locals.limitHeadersSet = true;
    if (decision.kind === 'refused') throw new ApiError(decision.code, {}, decision.retryAfterSeconds);
    next();
  };
}
