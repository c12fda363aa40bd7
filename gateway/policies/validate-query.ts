import { ApiError } from '../errors';
import { carriesKey } from '../keys/key-format';
import type { RequestContext, Step, WithItemQuery, WithListQuery } from '../pipeline';
import { parseEmptyQuery, parseItemQuery, parseListQuery, type QueryParse } from '../validation/query';

/** Parameter names of the surface: only these are named in the logged reason (an unknown name may be a pasted key). */
const KNOWN_PARAMETERS = new Set(['country', 'listing_type', 'property_type', 'limit', 'cursor']);

/**
 * The refusal naming the parameter. A caller who pasted its key (or any key in the project's
 * format, as the key-in-path and insights checks see one) as a parameter name does not get it
 * echoed back in the body.
 */
const toError = (failed: Extract<QueryParse<unknown>, { ok: false }>, ctx: RequestContext): ApiError => {
  const key = ctx.req.headers['x-api-key'];
  // The reported name may be cut at 128 characters: a name that holds the key, or a long piece of
  // it, is not echoed.
  const shown = failed.parameter.endsWith('…') ? failed.parameter.slice(0, -1) : failed.parameter;
  const pasted = carriesKey(shown) || (typeof key === 'string' && key.length > 0 && (shown.includes(key) || (shown.length >= 8 && key.includes(shown))));
  return pasted
    ? new ApiError('invalid_parameter', { parameter: 'query' }, undefined, 'Keys go in the x-api-key header, never in the query.').because('key_in_query')
    : new ApiError('invalid_parameter', { parameter: failed.parameter }, undefined, failed.message).because(KNOWN_PARAMETERS.has(failed.parameter) ? `parameter_${failed.parameter}` : 'parameter_unknown');
};

/** 400 `invalid_parameter` (with `parameter`) unless the query of `GET /v1/properties` is exactly right. */
export function validateListQuery(): Step<object, WithListQuery> {
  return function validatePropertiesQuery(ctx) {
    const parsed = parseListQuery(ctx.rawQuery);
    if (!parsed.ok) throw toError(parsed, ctx);
    ctx.listQuery = parsed.value;
  };
}

/** 400 `invalid_parameter` unless the query of `GET /v1/properties/{id}` is `country` alone. */
export function validateItemQuery(): Step<object, WithItemQuery> {
  return function validatePropertyQuery(ctx) {
    const parsed = parseItemQuery(ctx.rawQuery);
    if (!parsed.ok) throw toError(parsed, ctx);
    ctx.itemQuery = parsed.value;
  };
}

/** 400 `invalid_parameter` for any parameter on an endpoint that takes none (`/v1/ping`). */
export function validateNoQuery(): Step {
  return function refuseAnyParameter(ctx) {
    const parsed = parseEmptyQuery(ctx.rawQuery);
    if (!parsed.ok) throw toError(parsed, ctx);
  };
}
