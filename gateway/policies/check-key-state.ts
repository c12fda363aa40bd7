import { ApiError } from '../errors';
import type { Keyed, Step } from '../pipeline';

/** 403 `key_paused` for a paused key (revoked keys never get this far: they are 401). */
export function checkKeyState(): Step<Keyed> {
  return function rejectPausedKey(ctx) {
    if (ctx.key.status === 'paused') throw new ApiError('key_paused').because(`paused_${ctx.key.pauseReason ?? 'unknown'}`);
  };
}
