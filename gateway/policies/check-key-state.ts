import type { RequestHandler } from 'express';
import { ApiError } from '../errors';

/** 403 `key_paused` for a paused key (revoked keys never get this far: they are 401). */
export function checkKeyState(): RequestHandler {
  return function rejectPausedKey(_req, res, next) {
    if (res.locals.key!.status === 'paused') throw new ApiError('key_paused');
    next();
  };
}
