import type { RedisClient } from '../redis/connect';
import { dayOf, monthsBetween } from './usage-dates';
import { usageKeys } from './redis-usage-store';
import { RETAIN_MONTHS } from './retention';

/**
 * Forgets a key id's usage history in Redis (every month still kept): its daily counts and its
 * place in each month's report. A deleted key's id may be given to a new key, which must not
 * inherit the old one's history or bill. The month hashes share the id's hash tag (one DEL, one
 * slot); each month's index is its own key.
 */
export async function forgetUsage(redis: RedisClient, keyId: string, nowMs = Date.now()): Promise<void> {
  const first = new Date(nowMs);
  first.setUTCDate(1);
  first.setUTCMonth(first.getUTCMonth() - RETAIN_MONTHS);
  const months = monthsBetween(dayOf(first.getTime()), dayOf(nowMs));
  await redis.del(...months.map((m) => usageKeys.month(keyId, m)));
  await Promise.all(months.map((m) => redis.srem(usageKeys.index(m), keyId)));
}
