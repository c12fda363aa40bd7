import { ApiError } from '../errors';
import { carriesKey } from '../keys/key-format';
import type { Step } from '../pipeline';

/**
 * 404 `not_found` for a path that carries a key (the caller's own value, or one in this project's
 * format): no listing or insights path holds one, and the path would otherwise be forwarded to the
 * data service. Checked as sent and as decoded.
 */
export function refuseKeyInPath(): Step {
  return function refuseKeyInPathStep(ctx) {
    const value = ctx.req.headers['x-api-key'];
    const { id, subPath } = ctx.params;
    if (carriesKey(ctx.path, value) || (id !== undefined && carriesKey(id, value)) || (subPath !== undefined && carriesKey(subPath, value))) {
      throw new ApiError('not_found').because('key_in_path');
    }
  };
}
