import type { RedisClient } from '../redis/connect';
import { addTo, emptyCounts, isRefusalCode, type UsageCounts, type UsageEntry, type UsageField, type UsageStore } from './usage-model';
import { monthOfDay, monthStartPlus, monthsBetween } from './usage-dates';
import { RETAIN_MONTHS } from './retention';

/**
 * Redis layout of usage history. One hash per key and month, under the key's `{id}` hash tag (the
 * slot of its limit counters): field `DD` holds the accepted requests of day DD, `DD:<code>` the
 * refusals with that code. Small hashes are stored as listpacks, a few bytes per field. One set per
 * month lists the keys with any usage, for the monthly report.
 */
export const usageKeys = {
  month: (keyId: string, month: string) => `lgw:{${keyId}}:usage:${month}`,
  index: (month: string) => `lgw:usage:keys:${month}`,
} as const;

const fieldName = (e: UsageEntry): string => (e.field === 'accepted' ? e.day.slice(8) : `${e.day.slice(8)}:${e.field}`);

/** Reads one field of a month hash back into (day, field); unknown fields are ignored. */
function readField(month: string, field: string, value: string, into: (day: string, f: UsageField, n: number) => void): void {
  const [dd, code] = field.split(':') as [string, string | undefined];
  if (!/^\d{2}$/.test(dd)) return;
  if (code !== undefined && !isRefusalCode(code)) return;
  into(`${month}-${dd}`, code ?? 'accepted', Number(value));
}

/**
 * History shared by every instance, in Redis. Writes are increments (HINCRBY), so instances
 * flushing the same key and day add up; each month's hash and index expire 26 months after the
 * month began. Commands are sent one by one (ioredis pipelines them on the connection), which works
 * on a single node and on a cluster alike.
 */
export function createRedisUsageStore(redis: RedisClient): UsageStore {
  return {
    async add(entries: readonly UsageEntry[]) {
      const work: Promise<unknown>[] = [];
      const touched = new Map<string, string>(); // hash → month
      for (const e of entries) {
        const month = monthOfDay(e.day);
        const hash = usageKeys.month(e.keyId, month);
        work.push(redis.hincrby(hash, fieldName(e), e.count));
        if (!touched.has(hash)) {
          touched.set(hash, month);
          work.push(redis.sadd(usageKeys.index(month), e.keyId));
        }
      }
      for (const [hash, month] of touched) {
        const expiry = monthStartPlus(month, RETAIN_MONTHS);
        work.push(redis.pexpireat(hash, expiry), redis.pexpireat(usageKeys.index(month), expiry));
      }
      await Promise.all(work);
    },
    async days(keyId: string, from: string, to: string) {
      const out = new Map<string, UsageCounts>();
      const months = monthsBetween(from, to);
      const hashes = await Promise.all(months.map((m) => redis.hgetall(usageKeys.month(keyId, m))));
      months.forEach((month, i) => {
        for (const [field, value] of Object.entries(hashes[i]!)) {
          readField(month, field, value, (day, f, n) => {
            if (day < from || day > to) return;
            let counts = out.get(day);
            if (!counts) out.set(day, (counts = emptyCounts()));
            addTo(counts, f, n);
          });
        }
      });
      return out;
    },
    async month(month: string) {
      const ids = await redis.smembers(usageKeys.index(month));
      const hashes = await Promise.all(ids.map((id) => redis.hgetall(usageKeys.month(id, month))));
      const out = new Map<string, UsageCounts>();
      ids.forEach((id, i) => {
        const total = emptyCounts();
        for (const [field, value] of Object.entries(hashes[i]!)) readField(month, field, value, (_day, f, n) => addTo(total, f, n));
        out.set(id, total);
      });
      return out;
    },
  };
}
