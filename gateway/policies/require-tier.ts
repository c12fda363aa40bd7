import type { RequestHandler } from 'express';
import type { TierName } from '../config/gateway-config';
import { ApiError } from '../errors';

/** 403 `upgrade_required` when the key's tier is below `tier`. */
export function requireTier(tier: TierName): RequestHandler {
  return function requireKeyTier(_req, res, next) {
    if (tier === 'advanced' && res.locals.key!.tier !== 'advanced') throw new ApiError('upgrade_required');
    next();
  };
}
