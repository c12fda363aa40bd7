import type { RequestHandler } from 'express';
import { ApiError } from '../errors';

/**
 * 403 `ip_not_allowed` unless the request comes from the key's registered address. The answer
 * carries the address seen, so a caller on a new server learns what to register.
 */
export function bindAddress(): RequestHandler {
  return function bindKeyToAddress(_req, res, next) {
    const { key, clientIp } = res.locals;
    if (key!.address !== clientIp) throw new ApiError('ip_not_allowed', { ip: clientIp });
    next();
  };
}
