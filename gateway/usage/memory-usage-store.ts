import { addTo, emptyCounts, type UsageCounts, type UsageEntry, type UsageStore } from './usage-model';
import { monthOfDay, monthStartPlus } from './usage-dates';
import { RETAIN_MONTHS } from './retention';

/**
 * History in this process's memory: the embedded mode's store (no Redis). It is lost when the
 * process ends and each instance has its own. Months older than the retention are dropped as new
 * days are added, so memory stays bounded by keys × retained days.
 */
export function createMemoryUsageStore(now: () => number = Date.now): UsageStore {
  /** month → key id → day → counts */
  const months = new Map<string, Map<string, Map<string, UsageCounts>>>();

  const prune = (): void => {
    for (const month of months.keys()) if (monthStartPlus(month, RETAIN_MONTHS) <= now()) months.delete(month);
  };

  return {
    async add(entries: readonly UsageEntry[]) {
      for (const e of entries) {
        const month = monthOfDay(e.day);
        let keys = months.get(month);
        if (!keys) {
          months.set(month, (keys = new Map()));
          prune();
        }
        let days = keys.get(e.keyId);
        if (!days) keys.set(e.keyId, (days = new Map()));
        let counts = days.get(e.day);
        if (!counts) days.set(e.day, (counts = emptyCounts()));
        addTo(counts, e.field, e.count);
      }
    },
    async days(keyId: string, from: string, to: string) {
      const out = new Map<string, UsageCounts>();
      for (const [month, keys] of months) {
        if (month < monthOfDay(from) || month > monthOfDay(to)) continue;
        for (const [day, counts] of keys.get(keyId) ?? []) {
          if (day >= from && day <= to) out.set(day, structuredClone(counts));
        }
      }
      return out;
    },
    async month(month: string) {
      const out = new Map<string, UsageCounts>();
      for (const [keyId, days] of months.get(month) ?? []) {
        const total = emptyCounts();
        for (const counts of days.values()) {
          addTo(total, 'accepted', counts.accepted);
          for (const [code, n] of Object.entries(counts.refused)) addTo(total, code as keyof UsageCounts['refused'], n);
        }
        out.set(keyId, total);
      }
      return out;
    },
  };
}
