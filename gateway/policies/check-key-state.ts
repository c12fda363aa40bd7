import { ApiError } from '../errors';
import type { Step } from '../pipeline';

/**
 * 403 `key_paused` for a paused key (revoked keys never get this far: they are 401). The answer is
 * the same whatever the reasons; the log names them (`paused_unpaid_renewal`, or several joined by
 * `+`: `paused_payment_dispute+unpaid_renewal`).
 */
export function checkKeyState(): Step {
  return function rejectPausedKey(ctx) {
    const key = ctx.key!;
    if (key.status === 'paused') throw new ApiError('key_paused').because(`paused_${key.pauseReasons?.join('+') ?? 'unknown'}`);
  };
}
