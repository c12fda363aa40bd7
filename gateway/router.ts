import type { RouteName } from './pipeline';
import { isListingId } from './validation/query';

/** A matched path: the route, and its path parameters (percent-decoded and checked), typed by route. */
export type RouteMatch =
  | { [R in Exclude<RouteName, 'property' | 'insights'>]: { readonly kind: 'route'; readonly route: R; readonly params: NoParams } }[Exclude<RouteName, 'property' | 'insights'>]
  | { readonly kind: 'route'; readonly route: 'property'; readonly params: { readonly id: string } }
  | { readonly kind: 'route'; readonly route: 'insights'; readonly params: { readonly subPath: string } }
  | { readonly kind: 'not_found' };
type NoParams = { readonly id?: undefined; readonly subPath?: undefined };

const NOT_FOUND: RouteMatch = { kind: 'not_found' };
const EXACT: ReadonlyMap<string, RouteMatch> = new Map<string, RouteMatch>([
  ['/v1/ping', { kind: 'route', route: 'ping', params: {} }],
  ['/v1/properties', { kind: 'route', route: 'properties', params: {} }],
  ['/v1/insights', { kind: 'route', route: 'insights', params: { subPath: '' } }],
  ['/v1/openapi.json', { kind: 'route', route: 'reference', params: {} }],
  ['/docs', { kind: 'route', route: 'reference', params: {} }],
]);
const LISTING_PREFIX = '/v1/properties/';
const INSIGHTS_PREFIX = '/v1/insights/';
const ASSETS_PREFIX = '/docs/assets/';

function decode(segment: string): string | undefined {
  try {
    return decodeURIComponent(segment);
  } catch {
    return undefined;
  }
}

/**
 * The surface's paths, matched exactly (case-sensitive, no trailing slash, no normalisation), as a
 * pure function. Path parameters are percent-decoded and checked here, so an `{id}` or an insights
 * sub-path outside the contract's alphabet, or one that would traverse (`.`, `..`, an encoded
 * slash), is an unknown path: 404 before any key check, and it never reaches an upstream.
 */
export function matchRoute(path: string): RouteMatch {
  const exact = EXACT.get(path);
  if (exact) return exact;
  if (path.startsWith(LISTING_PREFIX)) {
    const id = decode(path.slice(LISTING_PREFIX.length));
    return id !== undefined && isListingId(id) ? { kind: 'route', route: 'property', params: { id } } : NOT_FOUND;
  }
  if (path.startsWith(INSIGHTS_PREFIX)) {
    const segments = path.slice(INSIGHTS_PREFIX.length).split('/');
    const decoded: string[] = [];
    for (const segment of segments) {
      const value = decode(segment);
      if (value === undefined || !isListingId(value)) return NOT_FOUND;
      decoded.push(encodeURIComponent(value));
    }
    return { kind: 'route', route: 'insights', params: { subPath: `/${decoded.join('/')}` } };
  }
  if (path.startsWith(ASSETS_PREFIX) && path.indexOf('/', ASSETS_PREFIX.length) < 0 && path.length > ASSETS_PREFIX.length) {
    return { kind: 'route', route: 'reference', params: {} };
  }
  return NOT_FOUND;
}
