import ipaddr from 'ipaddr.js';
import { ApiError } from '../errors';
import type { RequestContext, Step } from '../pipeline';

/**
 * A per-address budget of refused authentications (the unauthenticated budget), in memory, per
 * instance. Each 401 `unauthenticated` an address causes is charged to it for the current UTC
 * minute; once an address has used its budget, its requests to keyed endpoints are answered 429
 * `rate_limited` (with `Retry-After` until the minute ends) before any key is looked at, so a flood
 * of unknown keys costs one map look-up per request instead of a key-store look-up (a Redis GET).
 *
 * The valid path pays one `Map.size` check while no address is charged, a `Map.get` otherwise.
 * IPv6 addresses are charged by their /64 (one host usually holds a whole /64). At most
 * MAX_TRACKED addresses are charged per minute; past that, new addresses go unbudgeted for the rest
 * of the minute (the map never grows without bound).
 */
export interface RefusedAuthBudget {
  /** Seconds until the address may try again, or 0 when it is within its budget. */
  waitFor(ip: string, nowMs?: number): number;
  /** Charges one refused authentication to the address. */
  charge(ip: string, nowMs?: number): void;
  /** Refused authentications allowed per address and minute (0: off). */
  readonly perMinute: number;
  /** Hot reload: a new budget per address and minute (0: off). */
  update(perMinute: number): void;
}

const MAX_TRACKED = 100_000;
const MINUTE_MS = 60_000;

/** The budget's unit: an IPv4 address, or an IPv6 address's /64. */
function chargedUnit(ip: string): string {
  if (!ip.includes(':')) return ip;
  try {
    return `${ipaddr.IPv6.parse(ip).toNormalizedString().split(':').slice(0, 4).join(':')}::/64`;
  } catch {
    return ip;
  }
}

export function createRefusedAuthBudget(initialPerMinute: number): RefusedAuthBudget {
  let perMinute = initialPerMinute;
  let minute = 0;
  const refused = new Map<string, number>();

  const roll = (nowMs: number): void => {
    const current = nowMs - (nowMs % MINUTE_MS);
    if (current !== minute) {
      minute = current;
      refused.clear();
    }
  };

  return {
    waitFor(ip, nowMs = Date.now()) {
      if (refused.size === 0 || perMinute === 0) return 0;
      roll(nowMs);
      const used = refused.get(chargedUnit(ip));
      return used !== undefined && used >= perMinute ? Math.max(1, Math.ceil((minute + MINUTE_MS - nowMs) / 1000)) : 0;
    },
    charge(ip, nowMs = Date.now()) {
      if (perMinute === 0) return;
      roll(nowMs);
      const unit = chargedUnit(ip);
      const used = refused.get(unit);
      if (used === undefined && refused.size >= MAX_TRACKED) return;
      refused.set(unit, (used ?? 0) + 1);
    },
    get perMinute() {
      return perMinute;
    },
    update(next) {
      perMinute = next;
      refused.clear();
    },
  };
}

/**
 * `authenticate` within the address's budget: 429 `rate_limited` before the look-up for an address
 * over budget (its `RateLimit` headers describe the address's budget, window `address`), and every
 * 401 charged to the address.
 */
export function withinRefusedAuthBudget(budget: RefusedAuthBudget, authenticate: Step): Step {
  const refuse = (ctx: RequestContext, waitSeconds: number): never => {
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
    if (wait > 0) refuse(ctx, wait);
    let pending: ReturnType<Step>;
    try {
      pending = authenticate(ctx);
    } catch (err) {
      return charged(ctx, err);
    }
    if (pending) return pending.catch((err: unknown) => charged(ctx, err));
  };
}
