import type { TierName } from '../config/gateway-config';
import { ApiError } from '../errors';
import type { Step } from '../pipeline';

/** 403 `upgrade_required` when the key's tier is below `tier`. */
export function requireTier(tier: TierName): Step {
  return function requireKeyTier(ctx) {
    if (tier === 'advanced' && ctx.key!.tier !== 'advanced') throw new ApiError('upgrade_required').because(`tier_${ctx.key!.tier}`);
  };
}
