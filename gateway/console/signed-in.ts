import { parse as parseCookies, serialize as serializeCookie } from 'cookie';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { runAs } from '../audit/actor';
import { ApiError } from '../errors';
import type { OperatorRegistry } from '../operators/operator-tokens';
import { allows, type Permission, type Role } from '../operators/roles';
import type { PageContext } from './pages/layout';
import type { Session, SessionStore } from './sessions';

export const SESSION_COOKIE = 'lgw_console';

/** The signed-in operator of a console request (set by `requireSession`). */
export interface Signed {
  session: Session;
  name: string;
  role: Role;
  ctx: PageContext;
}

declare global {
  namespace Express {
    interface Locals {
      /** The console's signed-in operator (set by `requireSession`). */
      console?: Signed;
    }
  }
}

/** The signed-in operator; only called on routes behind `requireSession`. */
export function signed(res: Response): Signed {
  const s = res.locals.console;
  if (!s) throw new Error('signed: no session on this request (requireSession did not run)');
  return s;
}

/** The session cookie: HttpOnly, SameSite=Strict, Path=/console; `maxAgeSeconds` 0 clears it. */
export function sessionCookie(value: string, maxAgeSeconds: number): string {
  return serializeCookie(SESSION_COOKIE, value, { httpOnly: true, sameSite: 'strict', path: '/console', maxAge: maxAgeSeconds });
}

/**
 * Everything behind it needs a live session whose token is still in the operator set, unchanged; a
 * GET without one is sent to the sign-in page, anything else is 401. Every change made while
 * answering is recorded as this operator's, through the console.
 */
export function requireSession(sessions: SessionStore, operators: OperatorRegistry): RequestHandler {
  return function checkSession(req, res, next) {
    const id = parseCookies(req.headers.cookie ?? '')[SESSION_COOKIE];
    const session = id ? sessions.get(id) : undefined;
    const entry = session ? operators.entry(session.operatorName) : undefined;
    if (!session || !entry || !entry.digest.equals(session.tokenDigest)) {
      if (session) sessions.end(session.id);
      if (id) res.setHeader('Set-Cookie', sessionCookie('', 0));
      if (req.method === 'GET') return res.redirect(303, '/console/sign-in');
      throw new ApiError('unauthenticated', {}, undefined, 'Sign in first: there is no session, or it has ended.');
    }
    const ctx: PageContext = { operator: { name: entry.name, role: entry.role }, csrf: session.csrf };
    res.locals.console = { session, name: entry.name, role: entry.role, ctx };
    runAs({ name: entry.name, channel: 'console' }, next);
  };
}

/** 403 `forbidden` unless the signed-in operator's role allows `permission`. */
export const need = (permission: Permission) => function checkConsoleRole(_req: Request, res: Response, next: NextFunction): void {
  const { role, name } = signed(res);
  if (!allows(role, permission)) throw new ApiError('forbidden', {}, undefined, `The role "${role}" of token "${name}" cannot do this.`);
  next();
};
