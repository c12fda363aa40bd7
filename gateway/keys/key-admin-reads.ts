import { windowsAt } from '../limits/windows';
import { pageOfIds } from './id-pager';
import type { KeyAdmin, KeyAdminContext } from './key-admin-types';
import { unknownId } from './key-input';
import { checkPageLimit } from '../http/list-query';
import { PAGE } from '../http/page-bound';
import { toKeyRecord } from './key-record-build';
import { keyView, type UsageView } from './key-view';
import { parseStoredKey, redisKeys, type StoredKey } from './redis-layout';

/** The stored record of `id`; 404 when there is none. */
export async function loadRecord(ctx: KeyAdminContext, id: string): Promise<StoredKey> {
  const stored = parseStoredKey(await ctx.redis.get(redisKeys.record(id)));
  if (!stored) throw unknownId(id);
  return stored;
}

/** The key admin's reads: pages of records, one record, one key's use now. */
export function keyAdminReads(ctx: KeyAdminContext): Pick<KeyAdmin, 'list' | 'show' | 'usage'> {
  return {
    async list(options = {}) {
      const limit = options.limit ?? PAGE.default;
      checkPageLimit(limit);
      const { ids, next } = await pageOfIds(ctx.redis, limit, options.cursor);
      ids.sort();
      // One GET per record (records live in different cluster slots, so no MGET); a page is at most 1,000.
      const records: Array<string | null> = [];
      for (let i = 0; i < ids.length; i += 100) records.push(...(await Promise.all(ids.slice(i, i + 100).map((one) => ctx.redis.get(redisKeys.record(one))))));
      const config = ctx.config();
      const keys = records.map(parseStoredKey).filter((s): s is StoredKey => s !== undefined).map((s) => keyView(s, config));
      return { keys, next_cursor: next };
    },
    show: async (id) => keyView(await loadRecord(ctx, id), ctx.config()),
    async usage(id): Promise<UsageView> {
      const limits = toKeyRecord(await loadRecord(ctx, id), ctx.config()).limits;
      const now = Date.now();
      const bounds = windowsAt(now);
      const used = await ctx.counters.used(id, now);
      const row = (window: 'minute' | 'day' | 'month', limit: number) => ({
        window, used: used[window], limit, remaining: Math.max(0, limit - used[window]), resets_at: new Date(bounds[window].reset).toISOString(),
      });
      return { id, windows: [row('minute', limits.perMinute), row('day', limits.perDay), row('month', limits.perMonth)] };
    },
  };
}
