import { systemClock, type Clock } from '../clock';
import { ApiError } from '../errors';
import type { Counters, LimitDecision } from '../limits/counters';
import { setRateLimitHeaders } from '../limits/ratelimit-headers';
import type { Metrics } from '../ops/metrics';
import type { Keyed, RequestContext, Step } from '../pipeline';

/** What the limit check's span records: nothing when allowed, else why not. */
const spanOutcome = (d: LimitDecision): string | undefined => (d.kind === 'allowed' ? undefined : d.kind === 'unavailable' ? 'counters_unavailable' : d.code);

/**
 * Counts the request against the key's per-minute limit and daily and monthly quotas, as one step.
 * Sets `RateLimit-Policy` / `RateLimit`; refuses with 429 `quota_exceeded` or `rate_limited` and
 * `Retry-After`. A refused request is counted nowhere.
 */
export function enforceLimits(
  counters: Counters,
  metrics: Metrics,
  /** Told of every decision, synchronously (quota notifications); must not wait on anything. */
  onDecision?: (keyId: string, decision: LimitDecision) => void,
  /** The request's instant, which decides its windows (default: the system clock). */
  clock: Clock = systemClock,
): Step<Keyed> {
  const apply = (ctx: RequestContext & Keyed, decision: LimitDecision, atMs: number, started: number): void => {
    metrics.tally.limitCheck.cell(decision.kind === 'unavailable' ? 'shared' : (decision.store ?? 'local')).observe((performance.now() - started) / 1000);
    if (decision.kind === 'unavailable') throw new ApiError('service_unavailable', {}, 1).because('counters_unavailable');
    if (decision.kind === 'allowed') ctx.counted = { atMs, store: decision.store };
    onDecision?.(ctx.key.id, decision);
    metrics.tally.limitDecisions.add(decision.kind === 'allowed' ? 'allowed' : decision.code, decision.store ?? 'local');
    setRateLimitHeaders(ctx.res, decision.windows);
    if (decision.kind === 'refused') {
      metrics.tally.limitRefusals.add(decision.window);
      ctx.window = decision.window;
      throw new ApiError(decision.code, {}, decision.retryAfterSeconds).because(`${decision.window}_${decision.code === 'rate_limited' ? 'limit' : 'quota'}`);
    }
  };
  return function enforceKeyLimits(ctx) {
    const { key } = ctx;
    const atMs = clock.now();
    const started = performance.now();
    const span = ctx.trace?.step('limits.check');
    const decision = counters.consume(key.id, key.limits, atMs);
    if (decision instanceof Promise) {
      return decision.then((d) => {
        span?.end(spanOutcome(d));
        apply(ctx, d, atMs, started);
      });
    }
    span?.end(spanOutcome(decision));
    apply(ctx, decision, atMs, started);
  };
}
