import type { RedisClient } from '../redis/connect';

/**
 * The budget on a holder's changes in the portal, per account and UTC minute: each change is an
 * audit entry and a webhook, so one session must not make hundreds a second (about 250 a second
 * were made before there was a budget). A change is counted when it is tried, before anything is
 * written, so changes sent in parallel cannot pass the budget together. In Redis the count is
 * shared by every instance (one key per account and minute, changed by one script); in memory it is
 * this instance's. The limit
 * (`portal.self_service.changes_per_minute`, default 30) is read at each change (the gateway YAML
 * reloads it).
 */
export interface ChangeBudget {
  /** Counts a change of this account; false (nothing counted) when the minute's `perMinute` is used. */
  take(accountId: string, perMinute: number): Promise<boolean>;
  /** Seconds until the minute ends (Retry-After). */
  retryAfterSeconds(): number;
}

const minuteOf = (now: number): number => Math.floor(now / 60_000);
const retryAfter = (now: number): number => Math.max(1, Math.ceil((60_000 - (now % 60_000)) / 1000));

/** Accounts counted in memory per minute at most; past it the rest share one count (never unbudgeted). */
const MAX_ACCOUNTS = 10_000;

export function createMemoryChangeBudget(now: () => number = Date.now): ChangeBudget {
  let minute = -1;
  let counts = new Map<string, number>();
  return {
    async take(accountId, perMinute) {
      const m = minuteOf(now());
      if (m !== minute) {
        minute = m;
        counts = new Map();
      }
      const id = counts.has(accountId) || counts.size < MAX_ACCOUNTS ? accountId : '*';
      const used = counts.get(id) ?? 0;
      if (used >= perMinute) return false;
      counts.set(id, used + 1);
      return true;
    },
    retryAfterSeconds: () => retryAfter(now()),
  };
}

/** Counts one change unless the budget (ARGV[1]) is used; the key lives two minutes. */
const TAKE = `local n = redis.call('INCR', KEYS[1])
if n == 1 then redis.call('PEXPIRE', KEYS[1], 120000) end
if n > tonumber(ARGV[1]) then redis.call('DECR', KEYS[1]) return 0 end
return 1`;

export function createRedisChangeBudget(redis: RedisClient, now: () => number = Date.now): ChangeBudget {
  return {
    async take(accountId, perMinute) {
      return Number(await redis.eval(TAKE, 1, `lgw:portal:changes:${minuteOf(now())}:${accountId}`, perMinute)) === 1;
    },
    retryAfterSeconds: () => retryAfter(now()),
  };
}
