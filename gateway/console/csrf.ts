import type { NextFunction, Request, Response } from 'express';
import { ApiError } from '../errors';
import { formTokenMatches } from '../http/form-token';
import type { Session } from './sessions';

/** Constant-time check of a form's CSRF field against the session's. */
export function csrfMatches(session: Session, given: unknown): boolean {
  return formTokenMatches(session.csrf, given);
}

/** A POST from another origin is refused whatever it carries (SameSite=Strict and CSRF tokens are the main guard). */
export function sameOrigin(req: Request, _res: Response, next: NextFunction): void {
  const origin = req.headers.origin;
  if (origin !== undefined && origin !== `http://${req.headers.host}` && origin !== `https://${req.headers.host}`) {
    throw new ApiError('forbidden', {}, undefined, 'The form was not sent from this console.');
  }
  next();
}

/** A signed-in POST must carry the session's CSRF token in `_csrf`. */
export function requireCsrf(session: (res: Response) => Session) {
  return function checkCsrf(req: Request, res: Response, next: NextFunction): void {
    if (!csrfMatches(session(res), (req.body as Record<string, unknown> | undefined)?._csrf)) {
      throw new ApiError('forbidden', {}, undefined, 'The form is not from this session (missing or wrong CSRF token); reload the page and try again.');
    }
    next();
  };
}
