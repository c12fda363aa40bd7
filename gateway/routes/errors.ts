import type { Logger } from 'pino';
import { ApiError } from '../errors';
import type { Counters, LimitDecision } from '../limits/counters';
import { setRateLimitHeaders } from '../limits/ratelimit-headers';
import type { RequestContext } from '../pipeline';
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
      logger.error({ err, request_id: ctx.requestId, path: ctx.path }, 'unexpected error');
      apiError = new ApiError('internal_error');
    }
    ctx.errorCode = apiError.code;
    const { res, key } = ctx;
    if (res.headersSent || res.destroyed) {
      res.destroy();
      return;
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
