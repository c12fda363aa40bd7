import { ApiError } from '../errors';
import type { RefusedAuthBudget } from '../limits/refused-auth-table';
import type { Keyed, RequestContext, Step } from '../pipeline';

/**
 * `authenticate` within the address's budget (the unauthenticated budget; its table is
 * limits/refused-auth-table.ts): 429 `rate_limited` before the look-up for an address over budget
 * (its `RateLimit` headers describe the address's budget, window `address`), so a flood of unknown
 * keys costs a table look-up per request instead of a key-store look-up (a Redis GET); every 401
 * is charged to the address. Over budget, a key this process already holds as valid (`presentsKnown`:
 * the file's map or the Redis store's cache, no round trip) is still served: servers behind one NAT
 * address keep working while one of them sends a revoked or unknown key. Within budget nothing
 * extra is done.
 */
export function withinRefusedAuthBudget(
  budget: RefusedAuthBudget,
  authenticate: Step<object, Keyed>,
  presentsKnown: (ctx: RequestContext) => boolean,
  /** Told of every 429 the budget answers (gateway_limit_refusals_total{window="address"}). */
  onRefused?: () => void,
): Step<object, Keyed> {
  const refuse = (ctx: RequestContext, waitSeconds: number): never => {
    onRefused?.();
    ctx.res.setHeader('RateLimit-Policy', `"address";q=${budget.perMinute};w=60`);
    ctx.res.setHeader('RateLimit', `"address";r=0;t=${waitSeconds}`);
    throw new ApiError('rate_limited', {}, waitSeconds, 'Too many requests with a missing or unknown key from this address; wait Retry-After seconds.');
  };
  const charged = (ctx: RequestContext, err: unknown): never => {
    if (err instanceof ApiError && err.code === 'unauthenticated') budget.charge(ctx.clientIp);
    throw err;
  };
  return function authenticateWithinBudget(ctx) {
    const wait = budget.waitFor(ctx.clientIp);
    if (wait > 0 && !presentsKnown(ctx)) refuse(ctx, wait);
    let pending: void | Promise<void>;
    try {
      pending = authenticate(ctx);
    } catch (err) {
      return charged(ctx, err);
    }
    if (pending) return pending.catch((err: unknown) => charged(ctx, err));
  };
}
