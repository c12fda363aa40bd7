import { ApiError } from '../errors';
import type { Keyed, Step, WithItemQuery, WithListQuery } from '../pipeline';

/** 403 `country_not_entitled` unless the key's subscription covers the country the checked query (`of`) asks for. */
export function checkEntitlement(of: 'listQuery'): Step<Keyed & WithListQuery>;
export function checkEntitlement(of: 'itemQuery'): Step<Keyed & WithItemQuery>;
export function checkEntitlement(of: 'listQuery' | 'itemQuery'): Step<Keyed & (WithListQuery | WithItemQuery)> {
  return function checkCountryEntitlement(ctx) {
    const country = of === 'listQuery' ? (ctx as WithListQuery).listQuery.country : (ctx as WithItemQuery).itemQuery.country;
    if (!ctx.key.countries.has(country)) throw new ApiError('country_not_entitled').because(`country_${country}_not_in_subscription`);
  };
}
