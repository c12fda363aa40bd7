import { ApiError } from '../errors';
import type { Step } from '../pipeline';

/** 403 `country_not_entitled` unless the key's subscription covers the requested country. */
export function checkEntitlement(): Step {
  return function checkCountryEntitlement(ctx) {
    const country = (ctx.listQuery ?? ctx.itemQuery)!.country;
    if (!ctx.key!.countries.has(country)) throw new ApiError('country_not_entitled').because(`country_${country}_not_in_subscription`);
  };
}
