import type { RequestHandler, Response } from 'express';
import type { Logger } from 'pino';
import { ApiError } from '../errors';
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

/**
 * 401 `unauthenticated` unless `Authorization: Bearer <token>` names a known operator token. A failed
 * attempt is logged when a logger is given (address, method, why), never the token, the header or the path.
 */
export function bearerOperator(registry: OperatorRegistry, logger?: Logger): RequestHandler {
  return function checkOperatorToken(req, res, next) {
    const header = req.headers.authorization ?? '';
    const given = header.startsWith('Bearer ') ? header.slice(7) : '';
    const operator = registry.authenticate(given);
    if (!operator) {
      const reason = header === '' ? 'no_token' : given.length === 0 ? 'not_bearer' : 'wrong_token';
      // No path either: a token pasted into it must not reach the log.
      logger?.warn({ reason, ip: req.socket.remoteAddress, method: req.method }, 'admin authentication failed');
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
