import type { RequestHandler } from 'express';
import { ApiError } from '../errors';
import { parseEmptyQuery, parseItemQuery, parseListQuery, rawQueryOf, type QueryParse } from '../validation/query';

const toError = (failed: Extract<QueryParse<unknown>, { ok: false }>): ApiError =>
  new ApiError('invalid_parameter', { parameter: failed.parameter }, undefined, failed.message);

/** 400 `invalid_parameter` (with `parameter`) unless the query of `GET /v1/properties` is exactly right. */
export function validateListQuery(): RequestHandler {
  return function validatePropertiesQuery(req, res, next) {
    const parsed = parseListQuery(rawQueryOf(req.url));
    if (!parsed.ok) throw toError(parsed);
    res.locals.listQuery = parsed.value;
    next();
  };
}

/** 400 `invalid_parameter` unless the query of `GET /v1/properties/{id}` is `country` alone. */
export function validateItemQuery(): RequestHandler {
  return function validatePropertyQuery(req, res, next) {
    const parsed = parseItemQuery(rawQueryOf(req.url));
    if (!parsed.ok) throw toError(parsed);
    res.locals.itemQuery = parsed.value;
    next();
  };
}

/** 400 `invalid_parameter` for any parameter on an endpoint that takes none (`/v1/ping`). */
export function validateNoQuery(): RequestHandler {
  return function refuseAnyParameter(req, _res, next) {
    const parsed = parseEmptyQuery(rawQueryOf(req.url));
    if (!parsed.ok) throw toError(parsed);
    next();
  };
}
