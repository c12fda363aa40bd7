/** How long a key change takes to reach every gateway instance (the contract: within one second). */
import { getWithKey } from './http-send';
import { budget, sleep } from './timing';

/**
 * Polls `/v1/ping` with `value` on every instance until each answers `status`; returns the ms it
 * took after `since` (a key change made at `since`). Throws after `timeoutMs` (scaled by the load).
 */
export async function seenByAll(urls: readonly string[], value: string, status: number, since: number, timeoutMs = 5000): Promise<number> {
  const limit = budget(timeoutMs);
  await Promise.all(urls.map(async (url) => {
    for (;;) {
      if ((await getWithKey(url, '/v1/ping', value)).status === status) return;
      if (Date.now() - since > limit) throw new Error(`${url} did not answer ${status} within ${limit} ms`);
      await sleep(10);
    }
  }));
  return Date.now() - since;
}
