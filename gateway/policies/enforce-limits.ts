import type { RequestHandler } from 'express';
import { ApiError } from '../errors';
import type { Counters } from '../limits/counters';
import { setRateLimitHeaders } from '../limits/ratelimit-headers';

/**
 * Counts the request against the key's per-minute limit and daily and monthly quotas, as one step.
 * Sets `RateLimit-Policy` / `RateLimit`; refuses with 429 `quota_exceeded` or `rate_limited` and
 * `Retry-After`. A refused request is counted nowhere.
 */
export function enforceLimits(counters: Counters): RequestHandler {
  return async function enforceKeyLimits(_req, res, next) {
    const key = res.locals.key!;
    const decision = await counters.consume(key.id, key.limits);
    if (decision.kind === 'unavailable') throw new ApiError('service_unavailable', {}, 1);
    setRateLimitHeaders(res, decision.windows);
    res.locals.limitHeadersSet = true;
    if (decision.kind === 'refused') throw new ApiError(decision.code, {}, decision.retryAfterSeconds);
    next();
  };
}
