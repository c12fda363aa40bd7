import { ApiError } from '../errors';
import type { Step } from '../pipeline';

/**
 * 403 `ip_not_allowed` unless the request comes from the key's registered address. The answer
 * carries the address seen, so a caller on a new server learns what to register.
 */
export function bindAddress(): Step {
  return function bindKeyToAddress(ctx) {
    if (ctx.key!.address !== ctx.clientIp) throw new ApiError('ip_not_allowed', { ip: ctx.clientIp });
  };
}
