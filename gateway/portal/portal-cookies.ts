import { parse, serialize } from 'cookie';
import type { Request, Response } from 'express';

export const SESSION_COOKIE = 'lgw_portal';
export const PENDING_COOKIE = 'lgw_portal_oidc';

/**
 * SameSite=Lax, not Strict: a holder arrives from the identity provider's redirect (a cross-site
 * navigation) and from links in mail; changes are guarded by the CSRF token and the Origin check.
 * `Secure` when PORTAL_PUBLIC_URL is https.
 */
export function cookieJar(secure: boolean) {
  const base = { httpOnly: true, sameSite: 'lax' as const, secure };
  return {
    read: (req: Request, name: string): string | undefined => parse(req.headers.cookie ?? '')[name],
    set(res: Response, name: string, value: string, path: string, maxAgeSeconds: number): void {
      res.append('Set-Cookie', serialize(name, value, { ...base, path, maxAge: maxAgeSeconds }));
    },
    clear(res: Response, name: string, path: string): void {
      res.append('Set-Cookie', serialize(name, '', { ...base, path, maxAge: 0 }));
    },
  };
}
export type CookieJar = ReturnType<typeof cookieJar>;

/** The caller's address for the sign-in budget (Express's, with TRUST_PROXY taken into account). */
export const clientAddress = (req: Request): string => req.ip ?? req.socket.remoteAddress ?? 'unknown';
