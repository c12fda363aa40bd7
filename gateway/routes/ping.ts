import type { Keyed, Step } from '../pipeline';
import { sendJson } from '../send';

/** `GET /v1/ping`: the address the gateway saw, the key id and its tier. */
export function ping(): Step<Keyed> {
  return function answerPing(ctx) {
    const { key } = ctx;
    sendJson(ctx.res, 200, { ip: ctx.clientIp, key_id: key.id, tier: key.tier });
  };
}
