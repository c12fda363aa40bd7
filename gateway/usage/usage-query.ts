import { invalidParameter } from '../http/invalid-parameter';
import { addDays, dayOf, isMonth, parseDay } from './usage-dates';

/** The longest range one daily-usage request may ask for. */
export const MAX_RANGE_DAYS = 400;

/**
 * `from` and `to` of the daily usage (YYYY-MM-DD, UTC, inclusive). Defaults: `to` today, `from` 29
 * days before `to` (30 days). At most 400 days; `from` after `to` is refused.
 */
export function dayRange(params: Record<string, string | undefined>, nowMs = Date.now()): { from: string; to: string } {
  const to = params.to ?? dayOf(nowMs);
  if (parseDay(to) === undefined) throw invalidParameter('to', 'must be a date YYYY-MM-DD.');
  const from = params.from ?? addDays(to, -29);
  if (parseDay(from) === undefined) throw invalidParameter('from', 'must be a date YYYY-MM-DD.');
  if (from > to) throw invalidParameter('from', 'must not be after to.');
  if (parseDay(to)! - parseDay(from)! >= MAX_RANGE_DAYS * 86_400_000) throw invalidParameter('from', `at most ${MAX_RANGE_DAYS} days per request.`);
  return { from, to };
}

export function monthParam(value: string | undefined): string {
  if (value === undefined || !isMonth(value)) throw invalidParameter('month', 'required, as YYYY-MM.');
  return value;
}
