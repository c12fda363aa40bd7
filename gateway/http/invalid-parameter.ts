import { ApiError } from '../errors';

/**
 * The admin side's 400 `invalid_parameter` naming what was wrong: `parameter` in the body, and the
 * message `${parameter}: ${problem}` (or the catalogue's default when no problem is given).
 */
export function invalidParameter(parameter: string, problem?: string): ApiError {
  return new ApiError('invalid_parameter', { parameter }, undefined, problem === undefined ? undefined : `${parameter}: ${problem}`);
}
