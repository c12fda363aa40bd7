import { ApiError } from '../errors';
import { addDays, dayOf, isMonth, parseDay } from './usage-dates';

/** The longest range one daily-usage request may ask for. */
export const MAX_RANGE_DAYS = 400;

const invalid = (parameter: string, message: string): ApiError => new ApiError('invalid_parameter', { parameter }, undefined, message);

/** The query parameters of a request, refusing unknown and repeated ones (400 naming the parameter). */
export function queryParams(rawQuery: string, allowed: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of new URLSearchParams(rawQuery)) {
    if (!allowed.includes(name)) throw invalid(name, `Unknown parameter "${name}"; this path takes ${allowed.join(', ')}.`);
    if (name in out) throw invalid(name, `The parameter "${name}" is repeated.`);
    out[name] = value;
  }
  return out;
}

/**
 * `from` and `to` of the daily usage (YYYY-MM-DD, UTC, inclusive). Defaults: `to` today, `from` 29
 * days before `to` (30 days). At most 400 days; `from` after `to` is refused.
 */
export function dayRange(params: Record<string, string | undefined>, nowMs = Date.now()): { from: string; to: string } {
  const to = params.to ?? dayOf(nowMs);
  if (parseDay(to) === undefined) throw invalid('to', 'to must be a date YYYY-MM-DD.');
  const from = params.from ?? addDays(to, -29);
  if (parseDay(from) === undefined) throw invalid('from', 'from must be a date YYYY-MM-DD.');
  if (from > to) throw invalid('from', 'from must not be after to.');
  if (parseDay(to)! - parseDay(from)! >= MAX_RANGE_DAYS * 86_400_000) throw invalid('from', `At most ${MAX_RANGE_DAYS} days per request.`);
  return { from, to };
}

export function monthParam(value: string | undefined): string {
  if (value === undefined || !isMonth(value)) throw invalid('month', 'month is required, as YYYY-MM.');
  return value;
}
