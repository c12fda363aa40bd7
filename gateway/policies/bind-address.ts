import { ApiError } from '../errors';
import type { Keyed, Step } from '../pipeline';

/**
 * 403 `ip_not_allowed` unless the request comes from one of the key's registered addresses or
 * ranges (matched by a structure built when the record was loaded). The answer carries the address
 * seen, so a caller on a new server learns what to register.
 */
export function bindAddress(): Step<Keyed> {
  return function bindKeyToAddress(ctx) {
    if (!ctx.key.addresses.matches(ctx.clientIp)) throw new ApiError('ip_not_allowed', { ip: ctx.clientIp });
  };
}
