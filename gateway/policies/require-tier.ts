import type { TierName } from '../config/gateway-config';
import { ApiError } from '../errors';
import type { Keyed, Step } from '../pipeline';

/** The tiers in ascending order of what they open (a new tier must be placed here). */
const TIER_RANK: Readonly<Record<TierName, number>> = { standard: 0, advanced: 1 };

/** 403 `upgrade_required` when the key's tier is below `minimum`. */
export function requireTierAtLeast(minimum: TierName): Step<Keyed> {
  const needed = TIER_RANK[minimum];
  return function requireKeyTier(ctx) {
    const tier = ctx.key.tier;
    if (TIER_RANK[tier] < needed) throw new ApiError('upgrade_required').because(`tier_${tier}`);
  };
}
