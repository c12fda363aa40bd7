import { invalidParameter } from '../http/invalid-parameter';
import type { RedisClient } from '../redis/connect';
import { redisKeys } from './redis-layout';

/** A list cursor: the SSCAN cursor and how many ids of that batch the previous page already gave. */
const LIST_CURSOR = /^(0|[1-9][0-9]{0,19})-(0|[1-9][0-9]{0,4})$/;

/**
 * One page of ids by SSCAN over the id set: never one unbounded read. SSCAN's COUNT is a hint (a
 * small set comes back whole), so the cursor also says how many ids of its batch were already
 * given; asking SSCAN again from the same cursor gives the same batch while the set is unchanged.
 * As with SCAN, an id present for the whole walk is listed; one added or deleted meanwhile may
 * or may not be.
 */
export async function pageOfIds(redis: RedisClient, limit: number, cursor: string | undefined): Promise<{ ids: string[]; next: string | null }> {
  let scan = '0';
  let skip = 0;
  if (cursor !== undefined) {
    const m = LIST_CURSOR.exec(cursor);
    if (!m) throw invalidParameter('cursor', 'not a cursor this API gave (pass next_cursor back unchanged)');
    scan = m[1]!;
    skip = Number(m[2]);
  }
  const ids: string[] = [];
  const seen = new Set<string>();
  for (;;) {
    const [nextScan, batch] = await redis.sscan(redisKeys.ids, scan, 'COUNT', limit);
    for (let i = skip; i < batch.length; i++) {
      if (ids.length === limit) return { ids, next: `${scan}-${i}` };
      const id = batch[i]!;
      // SSCAN may give an id twice during a rehash: once per page is what we can promise.
      if (!seen.has(id)) {
        seen.add(id);
        ids.push(id);
      }
    }
    skip = 0;
    scan = nextScan;
    if (scan === '0') return { ids, next: null };
    if (ids.length === limit) return { ids, next: `${scan}-0` };
  }
}
