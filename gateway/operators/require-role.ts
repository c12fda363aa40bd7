import type { RequestHandler, Response } from 'express';
import type { Logger } from 'pino';
import { ApiError } from '../errors';
import type { GuessBudget } from './guess-budget';
import type { Operator, OperatorRegistry } from './operator-tokens';
import { allows, leastRole, type Permission } from './roles';

declare global {
  namespace Express {
    interface Locals {
      /** The operator the admin API request was authenticated as (set by `bearerOperator`). */
      operator?: Operator;
    }
  }
}

/** The operator a request was authenticated as (set by `bearerOperator`). */
export function operatorOf(res: Response): Operator {
  const operator = res.locals.operator;
  if (!operator) throw new Error('operatorOf: no operator on this request (bearerOperator did not run)');
  return operator;
}

/** 429 `rate_limited` for an address that used its guesses (admin API and console alike). */
export const tooManyGuesses = (waitSeconds: number): ApiError =>
  new ApiError('rate_limited', {}, waitSeconds, `Too many failed operator tokens from this address; retry in ${waitSeconds} s.`);

/**
 * 401 `unauthenticated` unless `Authorization: Bearer <token>` names a known operator token. A failed
 * attempt is logged when a logger is given (address, method, why), never the token, the header or the path.
 * With a guess budget, an address past its failures is answered 429 `rate_limited` before any
 * token is looked at (logged once, with the address, when it runs out).
 */
export function bearerOperator(registry: OperatorRegistry, logger?: Logger, guesses?: GuessBudget): RequestHandler {
  return function checkOperatorToken(req, res, next) {
    const ip = req.socket.remoteAddress ?? '';
    const wait = guesses?.waitFor(ip);
    if (wait !== undefined) throw tooManyGuesses(wait);
    const header = req.headers.authorization ?? '';
    const given = header.startsWith('Bearer ') ? header.slice(7) : '';
    const operator = registry.authenticate(given);
    if (!operator) {
      const reason = header === '' ? 'no_token' : given.length === 0 ? 'not_bearer' : 'wrong_token';
      // No path either: a token pasted into it must not reach the log.
      logger?.warn({ reason, ip, method: req.method }, 'admin authentication failed');
      // A wrong token is a guess; a missing one is not.
      if (reason === 'wrong_token' && guesses?.failed(ip)) logger?.warn({ ip, channel: 'admin_api' }, 'admin authentication: too many failures from this address; refused for the rest of the minute');
      throw new ApiError('unauthenticated', {}, undefined, 'A valid operator bearer token is required.');
    }
    res.locals.operator = operator;
    next();
  };
}

/** 403 `forbidden` unless the operator's role allows `permission`. */
export function permit(permission: Permission): RequestHandler {
  return function checkRole(_req, res, next) {
    const operator = operatorOf(res);
    if (!allows(operator.role, permission)) {
      throw new ApiError('forbidden', {}, undefined, `The role "${operator.role}" of token "${operator.name}" cannot do this; it needs "${leastRole(permission)}".`);
    }
    next();
  };
}
