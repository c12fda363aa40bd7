import type { RequestHandler, Response } from 'express';
import { ApiError } from '../errors';
import type { Operator, OperatorRegistry } from './operator-tokens';
import { allows, leastRole, type Permission } from './roles';

/** The operator a request was authenticated as (set by `bearerOperator`). */
export function operatorOf(res: Response): Operator {
  const operator = res.locals.operator as Operator | undefined;
  if (!operator) throw new Error('operatorOf: no operator on this request (bearerOperator did not run)');
  return operator;
}

/** 401 `unauthenticated` unless `Authorization: Bearer <token>` names a known operator token. */
export function bearerOperator(registry: OperatorRegistry): RequestHandler {
  return function checkOperatorToken(req, res, next) {
    const header = req.headers.authorization ?? '';
    const given = header.startsWith('Bearer ') ? header.slice(7) : '';
    const operator = registry.authenticate(given);
    if (!operator) throw new ApiError('unauthenticated', {}, undefined, 'A valid operator bearer token is required.');
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
