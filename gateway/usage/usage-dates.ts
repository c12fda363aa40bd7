/** UTC calendar helpers for usage history: days as `YYYY-MM-DD`, months as `YYYY-MM`. Pure. */

const DAY_MS = 86_400_000;

export const dayOf = (ms: number): string => new Date(ms).toISOString().slice(0, 10);
export const monthOfDay = (day: string): string => day.slice(0, 7);

/** Milliseconds at the start of a valid `YYYY-MM-DD`, or undefined (2026-02-30 is not a day). */
export function parseDay(text: string): number | undefined {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(text)) return undefined;
  const ms = Date.parse(`${text}T00:00:00Z`);
  return Number.isNaN(ms) || dayOf(ms) !== text ? undefined : ms;
}

/** True for a valid `YYYY-MM` (month 01..12). */
export const isMonth = (text: string): boolean => /^\d{4}-(0[1-9]|1[0-2])$/.test(text);

/** Every day from `from` to `to` inclusive (both valid days, from ≤ to). */
export function daysBetween(from: string, to: string): string[] {
  const out: string[] = [];
  for (let ms = parseDay(from)!, end = parseDay(to)!; ms <= end; ms += DAY_MS) out.push(dayOf(ms));
  return out;
}

/** The months the days from..to touch, in order. */
export function monthsBetween(from: string, to: string): string[] {
  const out: string[] = [];
  let [y, m] = from.split('-').map(Number) as [number, number];
  const last = monthOfDay(to);
  for (;;) {
    const month = `${y}-${String(m).padStart(2, '0')}`;
    out.push(month);
    if (month >= last) return out;
    m += 1;
    if (m > 12) [y, m] = [y + 1, 1];
  }
}

export const addDays = (day: string, n: number): string => dayOf(parseDay(day)! + n * DAY_MS);

/** Start of the month `months` after the start of `month` (YYYY-MM), in ms. */
export function monthStartPlus(month: string, months: number): number {
  const [y, m] = month.split('-').map(Number) as [number, number];
  return Date.UTC(y, m - 1 + months, 1);
}
