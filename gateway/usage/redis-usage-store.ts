import type { RedisClient } from '../redis/connect';
import { addTo, emptyCounts, isRefusalCode, mayHaveApplied, PartialUsageWrite, type UsageCounts, type UsageEntry, type UsageField, type UsageStore } from './usage-model';
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
 * on a single node and on a cluster alike; so a batch can fail in part, and says which part may be
 * sent again (PartialUsageWrite).
 */
export function createRedisUsageStore(redis: RedisClient): UsageStore {
  return {
    async add(entries: readonly UsageEntry[]) {
      const hashOf = (e: UsageEntry): string => usageKeys.month(e.keyId, monthOfDay(e.day));
      const increments = entries.map((e) => redis.hincrby(hashOf(e), fieldName(e), e.count));
      const touched = new Map<string, UsageEntry>(); // hash → its first entry
      for (const e of entries) if (!touched.has(hashOf(e))) touched.set(hashOf(e), e);
      // Index and expiry: idempotent, so repeating them is harmless.
      const bookkeeping = [...touched.values()].map((e) => {
        const month = monthOfDay(e.day);
        const expiry = monthStartPlus(month, RETAIN_MONTHS);
        return Promise.all([redis.sadd(usageKeys.index(month), e.keyId), redis.pexpireat(hashOf(e), expiry), redis.pexpireat(usageKeys.index(month), expiry)]);
      });
      const [added, kept] = await Promise.all([Promise.allSettled(increments), Promise.allSettled(bookkeeping)]);
      const failed = [...added, ...kept].find((r): r is PromiseRejectedResult => r.status === 'rejected');
      if (!failed) return;
      const unkept = new Set([...touched.keys()].filter((_, i) => kept[i]!.status === 'rejected'));
      const retry: UsageEntry[] = [];
      let uncertain = 0;
      entries.forEach((e, i) => {
        const result = added[i]!;
        if (result.status === 'rejected' && !mayHaveApplied(result.reason)) retry.push(e);
        else {
          if (result.status === 'rejected') uncertain += e.count;
          if (result.status === 'rejected' || unkept.has(hashOf(e))) retry.push({ ...e, count: 0 });
        }
      });
      throw new PartialUsageWrite(String((failed.reason as Error | undefined)?.message ?? failed.reason), retry, uncertain);
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
