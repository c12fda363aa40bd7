import { REFUSAL_CODES, type UsageStore } from './usage-model';
import { addDays, dayOf } from './usage-dates';
import { MAX_RANGE_DAYS, monthParam } from './usage-query';
import { dailyUsage, monthlyReport, reportCsv } from './usage-reports';

/** A caller's mistake on the command line (the CLI prints the message and exits 1). */
export class UsageArgumentError extends Error {}

/** Right-aligned columns under a header; numbers read best aligned on the right. */
function table(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: readonly string[]): string => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ').trimEnd();
  return [line(header), ...rows.map(line)].join('\n');
}

const refusedTotal = (refused: Partial<Record<string, number>>): number => Object.values(refused).reduce<number>((a, n) => a + (n ?? 0), 0);
const refusedDetail = (refused: Partial<Record<string, number>>): string =>
  REFUSAL_CODES.filter((c) => refused[c]).map((c) => `${c}=${refused[c]}`).join(' ');

/** `keys usage ID --days N`: the last N UTC days (today included), one line a day, and a total. */
export async function usageTable(store: UsageStore, keyId: string, daysText: string, nowMs = Date.now()): Promise<string> {
  if (!/^\d+$/.test(daysText) || Number(daysText) < 1 || Number(daysText) > MAX_RANGE_DAYS) {
    throw new UsageArgumentError(`--days must be a whole number from 1 to ${MAX_RANGE_DAYS}, got "${daysText}"`);
  }
  const to = dayOf(nowMs);
  const usage = await dailyUsage(store, keyId, addDays(to, 1 - Number(daysText)), to);
  const rows = usage.days.map((d) => [d.date, String(d.accepted), String(refusedTotal(d.refused)), refusedDetail(d.refused)]);
  const accepted = usage.days.reduce((a, d) => a + d.accepted, 0);
  const refused = usage.days.reduce((a, d) => a + refusedTotal(d.refused), 0);
  rows.push(['total', String(accepted), String(refused), '']);
  return `usage of ${keyId} (UTC days)\n${table(['date', 'accepted', 'refused', 'refused by code'], rows)}\n`;
}

/** `keys report --month YYYY-MM [--csv]`: every key's monthly totals, as a table or the CSV export. */
export async function monthReport(store: UsageStore, monthText: string | undefined, csv: boolean): Promise<string> {
  let month: string;
  try {
    month = monthParam(monthText);
  } catch {
    throw new UsageArgumentError(`report needs --month YYYY-MM${monthText === undefined ? '' : `, got "${monthText}"`}`);
  }
  const report = await monthlyReport(store, month);
  if (csv) return reportCsv(report);
  const rows = report.keys.map((k) => [k.key_id, String(k.accepted), String(refusedTotal(k.refused)), refusedDetail(k.refused)]);
  return `usage in ${month} (UTC)\n${table(['key_id', 'accepted', 'refused', 'refused by code'], rows)}\n`;
}
