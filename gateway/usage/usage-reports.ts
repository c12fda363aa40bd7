import { csvCell } from '../output/safe-text';
import { REFUSAL_CODES, type UsageCounts, type UsageStore } from './usage-model';
import { daysBetween } from './usage-dates';

export interface DailyUsage {
  key_id: string;
  days: Array<{ date: string; accepted: number; refused: UsageCounts['refused'] }>;
}

export interface MonthlyReport {
  month: string;
  keys: Array<{ key_id: string; accepted: number; refused: UsageCounts['refused'] }>;
}

/** Every day from..to, in order, days without any count included as zeros (so a chart has no gaps). */
export async function dailyUsage(store: UsageStore, keyId: string, from: string, to: string): Promise<DailyUsage> {
  const known = await store.days(keyId, from, to);
  return {
    key_id: keyId,
    days: daysBetween(from, to).map((date) => {
      const c = known.get(date);
      return { date, accepted: c?.accepted ?? 0, refused: c ? { ...c.refused } : {} };
    }),
  };
}

/** Every key's totals for the month, ordered by key id: the billing export. */
export async function monthlyReport(store: UsageStore, month: string): Promise<MonthlyReport> {
  const totals = await store.month(month);
  return {
    month,
    keys: [...totals.entries()]
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([key_id, c]) => ({ key_id, accepted: c.accepted, refused: { ...c.refused } })),
  };
}

/** The CSV header: key id, accepted, then one column per refusal code (RFC 4180, CRLF lines). */
export const CSV_HEADER = ['key_id', 'accepted', ...REFUSAL_CODES.map((c) => `refused_${c}`)] as const;

/** A field quoted when it needs to be (key ids are plain, but a report must never break its format). */

export function reportCsv(report: MonthlyReport): string {
  const lines = [CSV_HEADER.join(',')];
  for (const row of report.keys) {
    lines.push([csvCell(row.key_id), String(row.accepted), ...REFUSAL_CODES.map((c) => String(row.refused[c] ?? 0))].join(','));
  }
  return `${lines.join('\r\n')}\r\n`;
}
