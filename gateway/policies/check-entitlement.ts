import type { RequestHandler } from 'express';
import { ApiError } from '../errors';

/** 403 `country_not_entitled` unless the key's subscription covers the requested country. */
export function checkEntitlement(): RequestHandler {
  return function checkCountryEntitlement(_req, res, next) {
    const country = (res.locals.listQuery ?? res.locals.itemQuery)!.country;
    if (!res.locals.key!.countries.has(country)) throw new ApiError('country_not_entitled');
    next();
  };
}
