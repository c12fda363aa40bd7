import type { Logger } from 'pino';
import { ApiError } from '../errors';
import { isExpectedRedisError } from '../redis/expected-errors';

/** body-parser's refusals (bad JSON, too large, too many fields, unsupported charset or encoding) carry a 4xx status. */
const isCallersMistake = (err: unknown): boolean => {
  const status = (err as { status?: unknown; statusCode?: unknown }).status ?? (err as { statusCode?: unknown }).statusCode;
  return typeof status === 'number' && status >= 400 && status < 500;
};

/**
 * The catalogue error an operator's request on the admin listener (admin API or console) is
 * answered with, whatever was thrown: an `ApiError` as it is; a path that cannot be decoded, 404;
 * a body the parser refused, 400 `invalid_parameter` with `bodyMessage`; Redis away or refusing this
 * configuration, 503 (the first logged as one line, the second with its error); anything else 500,
 * logged with its stack. Never a stack in the answer.
 */
export function operatorError(err: unknown, logger: Logger, o: { bodyMessage: string; failed: string }): ApiError {
  if (err instanceof ApiError) return err;
  if (err instanceof URIError) return new ApiError('not_found');
  if (isCallersMistake(err)) return new ApiError('invalid_parameter', { parameter: 'body' }, undefined, o.bodyMessage);
  if (isExpectedRedisError(err)) {
    // Redis away: expected, one line without a stack.
    logger.warn({ reason: 'redis_unavailable', err: (err as Error).message }, `${o.failed}: Redis unavailable`);
    return new ApiError('service_unavailable', {}, 1);
  }
  logger.error({ err }, o.failed);
  // Redis refusing this configuration (logged above): the caller may retry later, not a bug.
  return (err as { name?: string }).name === 'MaxRetriesPerRequestError' || /Command timed out|Connection is closed|Stream isn't writeable|^(NOPERM|MOVED|CROSSSLOT|NOAUTH|WRONGPASS|CLUSTERDOWN|TRYAGAIN|READONLY)\b/.test(String((err as Error)?.message))
    ? new ApiError('service_unavailable', {}, 1)
    : new ApiError('internal_error');
}
