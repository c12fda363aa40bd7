import type { Logger } from 'pino';
import { ApiError } from '../errors';
import { logRedisFailure } from '../redis/expected-errors';
import { invalidParameter } from './invalid-parameter';

/** body-parser's refusals (bad JSON, too large, too many fields, unsupported charset or encoding) carry a 4xx status. */
const isCallersMistake = (err: unknown): boolean => {
  const status = (err as { status?: unknown; statusCode?: unknown }).status ?? (err as { statusCode?: unknown }).statusCode;
  return typeof status === 'number' && status >= 400 && status < 500;
};

const isRedisCursorRefusal = (err: unknown): boolean => err instanceof Error && err.name === 'ReplyError' && /^ERR invalid cursor$/i.test(err.message);

/**
 * The catalogue error an operator's request on the admin listener (admin API or console) is
 * answered with, whatever was thrown: an `ApiError` as it is; a path that cannot be decoded, 404;
 * a body the parser refused, 400 `invalid_parameter` with `bodyMessage`; Redis away or refusing this
 * configuration, 503 (logged as one line, see logRedisFailure); anything else 500,
 * logged with its stack. Never a stack in the answer.
 */
export function operatorError(err: unknown, logger: Logger, o: { bodyMessage: string; failed: string }): ApiError {
  if (err instanceof ApiError) return err;
  if (err instanceof URIError) return new ApiError('not_found');
  if (isCallersMistake(err)) return new ApiError('invalid_parameter', { parameter: 'body' }, undefined, o.bodyMessage);
  // A list cursor whose numbers Redis cannot take (SSCAN's is below 2^64): the caller's mistake, not ours.
  if (isRedisCursorRefusal(err)) return invalidParameter('cursor', 'not a cursor this API gave (pass next_cursor back unchanged)');
  // Redis away or failing over (a warning), or refusing this configuration (an error): one line, no stack.
  if (logRedisFailure(err, logger, o.failed)) return new ApiError('service_unavailable', {}, 1);
  logger.error({ err }, o.failed);
  return new ApiError('internal_error');
}
