import type { NextFunction, Request, Response } from 'express';
import { ApiError } from '../errors';

const originOf = (url: string): string | undefined => {
  try {
    return new URL(url).origin;
  } catch {
    return undefined;
  }
};

/**
 * Every change must come from a page of this portal (docs/portal.md): its `Origin` must be
 * PORTAL_PUBLIC_URL's origin; without an `Origin`, its `Referer` must be on that origin; with
 * neither, it is refused. On top of the CSRF token (checked once signed in) and SameSite cookies.
 */
export function sameOrigin(publicUrl: string) {
  const expected = new URL(publicUrl).origin;
  return function portalSameOrigin(req: Request, _res: Response, next: NextFunction): void {
    const origin = req.headers.origin;
    const referer = req.headers.referer;
    const seen = origin !== undefined ? (origin === 'null' ? undefined : originOf(origin)) : referer !== undefined ? originOf(referer) : undefined;
    if (seen !== expected) {
      throw new ApiError('forbidden', {}, undefined, 'The form was not sent from a page of this portal; nothing was changed. Reload the page and try again.');
    }
    next();
  };
}
