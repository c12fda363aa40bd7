import type { Logger } from 'pino';
import { ApiError } from '../errors';
import type { Counters, LimitDecision } from '../limits/counters';
import { setRateLimitHeaders } from '../limits/ratelimit-headers';
import type { RequestContext } from '../pipeline';
import { DEFAULT_REASON } from '../log-reasons';
import { sendError } from '../send';

/**
 * The one error handler of the public surface. An `ApiError` is answered as it is; anything else is
 * logged and answered 500 `internal_error`, never with a stack. Answers to an identified key carry its
 * `RateLimit` headers even when refused before the limit step (read without counting).
 */
export function createErrorHandler(logger: Logger, counters: Counters) {
  return function answerError(err: unknown, ctx: RequestContext): void {
    let apiError: ApiError;
    if (err instanceof ApiError) apiError = err;
    else {
      // The raw path may carry a key (the key-in-path check may not have run yet): the request's
      // "answered" line, with the same request_id, carries the URL as logged (logging.ts).
      logger.error({ err, request_id: ctx.requestId }, 'unexpected error');
      apiError = new ApiError('internal_error').because('unexpected_error');
    }
    ctx.errorCode = apiError.code;
    ctx.reason = apiError.reason ?? DEFAULT_REASON[apiError.code];
    if (apiError.upstream !== undefined) ctx.upstream = apiError.upstream;
    const { res, key } = ctx;
    if (res.headersSent || res.destroyed) {
      res.destroy();
      return;
    }
    // Failures are not charged (docs/guarantees.md): a counted request answered 500 or 503 gives its
    // count back, off the request's way (the answer does not wait for it). Only when it is answered:
    // a caller that went away (the upstream call aborted) stays charged, or hanging up before each
    // answer would make the data service work beyond the key's limits for free.
    if (key && ctx.counted && (apiError.status === 500 || apiError.status === 503)) {
      const { atMs, store } = ctx.counted;
      ctx.counted = undefined;
      Promise.resolve()
        .then(() => counters.refund(key.id, atMs, store))
        .catch((err: unknown) => logger.debug({ err: (err as Error)?.message, key_id: key.id }, 'refund failed'));
    }
    // The limit step already set them when it ran (it refused, or a later step failed).
    if (!key || res.hasHeader('RateLimit')) return sendError(res, apiError);
    const withHeaders = (decision: LimitDecision): void => {
      if (decision.kind !== 'unavailable') setRateLimitHeaders(res, decision.windows);
    };
    let peeked: LimitDecision | Promise<LimitDecision>;
    try {
      peeked = counters.peek(key.id, key.limits);
    } catch {
      return sendError(res, apiError);
    }
    if (!(peeked instanceof Promise)) {
      withHeaders(peeked);
      return sendError(res, apiError);
    }
    peeked
      .then(withHeaders)
      .catch(() => undefined)
      .finally(() => {
        if (!res.headersSent && !res.destroyed) sendError(res, apiError);
      });
  };
}
