import type { RequestHandler } from 'express';
import { sendJson } from '../send';

/** `GET /v1/ping`: the address the gateway saw, the key id and its tier. */
export function ping(): RequestHandler {
  return function answerPing(_req, res) {
    const key = res.locals.key!;
    sendJson(res, 200, { ip: res.locals.clientIp, key_id: key.id, tier: key.tier });
  };
}
