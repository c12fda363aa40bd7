import type { ServerResponse } from 'node:http';
import type { WindowState } from './counters';

/**
 * Sets `RateLimit-Policy` and `RateLimit` as structured fields of the IETF draft
 * (draft-ietf-httpapi-ratelimit-headers): one item per window, e.g.
 *   RateLimit-Policy: "minute";q=60;w=60, "day";q=10000;w=86400, "month";q=250000;w=2592000
 *   RateLimit: "minute";r=59;t=42, "day";r=9999;t=51000, "month";r=249999;t=1900000
 */
export function setRateLimitHeaders(res: ServerResponse, windows: readonly WindowState[]): void {
  let policy = '';
  let state = '';
  for (const w of windows) {
    const sep = policy ? ', ' : '';
    policy += `${sep}"${w.name}";q=${w.limit};w=${w.windowSeconds}`;
    state += `${sep}"${w.name}";r=${w.remaining};t=${w.resetSeconds}`;
  }
  res.setHeader('RateLimit-Policy', policy);
  res.setHeader('RateLimit', state);
}
