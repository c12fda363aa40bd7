import type { ErrorRequestHandler, RequestHandler } from 'express';
import type { Logger } from 'pino';
import { ApiError } from '../errors';
import type { Counters } from '../limits/counters';
import { setRateLimitHeaders } from '../limits/ratelimit-headers';
import { sendError } from '../send';
import { isListingId } from '../validation/query';

/** 404 `not_found` for a `{id}` outside the contract's alphabet: such a path never reaches the data service. */
export function requireListingId(): RequestHandler {
  return function rejectMalformedListingId(req, _res, next) {
    if (!isListingId(req.params.id as string)) throw new ApiError('not_found');
    next();
  };
}

/** 405 `method_not_allowed` with `Allow: GET` for any other method (HEAD included) on a known path. */
export function onlyGet(): RequestHandler {
  return function rejectOtherMethods(req, _res, next) {
    if (req.method !== 'GET') throw new ApiError('method_not_allowed');
    next();
  };
}

/** 404 `not_found` for every path that is not part of the surface. */
export function notFound(): RequestHandler {
  return function answerNotFound() {
    throw new ApiError('not_found');
  };
}

/**
 * The one error handler. An `ApiError` is answered as it is; a percent-decoding failure in the path
 * is an unknown path; anything else is logged and answered 500 `internal_error`, never with a stack.
 * Answers to an identified key carry its `RateLimit` headers even when refused before the limit step.
 */
export function handleErrors(logger: Logger, counters: Counters): ErrorRequestHandler {
  return function answerError(err: unknown, req, res, _next) {
    let apiError: ApiError;
    if (err instanceof ApiError) apiError = err;
    else if (err instanceof URIError) apiError = new ApiError('not_found');
    else {
      logger.error({ err, request_id: res.locals.requestId, url: req.path }, 'unexpected error');
      apiError = new ApiError('internal_error');
    }
    res.locals.errorCode = apiError.code;
    if (res.headersSent) {
      res.destroy();
      return;
    }
    const key = res.locals.key;
    if (!key || res.locals.limitHeadersSet) return sendError(res, apiError);
    Promise.resolve(counters.peek(key.id, key.limits))
      .then((decision) => {
        if (decision.kind !== 'unavailable') setRateLimitHeaders(res, decision.windows);
      })
      .catch(() => undefined)
      .finally(() => sendError(res, apiError));
  };
}
