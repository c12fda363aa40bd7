import type { Limits } from '../config/gateway-config';
import type { LimitDecision, WindowState } from './counters';
import { secondsUntil, type WindowBounds, type WindowName } from './windows';

export type WindowCounts = Readonly<Record<WindowName, number>>;

const limitOf = (limits: Limits, name: WindowName): number =>
  name === 'minute' ? limits.perMinute : name === 'day' ? limits.perDay : limits.perMonth;

/**
 * The decision for a request, given the counts already used in each window before it. Pure: the
 * memory and Redis counters share it, so both refuse and report identically.
 * `counted` says whether the request was counted (then remaining is one less).
 */
export function decide(
  used: WindowCounts,
  limits: Limits,
  nowMs: number,
  counted: boolean,
  bounds: Readonly<Record<WindowName, WindowBounds>>,
): LimitDecision {
  const windows: WindowState[] = (['minute', 'day', 'month'] as const).map((name) => {
    const limit = limitOf(limits, name);
    const after = used[name] + (counted ? 1 : 0);
    return {
      name,
      limit,
      remaining: Math.max(0, limit - after),
      resetSeconds: secondsUntil(bounds[name].reset, nowMs),
      windowSeconds: Math.round((bounds[name].reset - bounds[name].start) / 1000),
    };
  });
  if (counted) return { kind: 'allowed', windows };
  const [minute, day, month] = windows as [WindowState, WindowState, WindowState];
  // A quota outranks the per-minute limit; waiting for the day's reset is useless while the month is spent.
  if (used.month >= month.limit) return { kind: 'refused', code: 'quota_exceeded', window: 'month', retryAfterSeconds: month.resetSeconds, windows };
  if (used.day >= day.limit) return { kind: 'refused', code: 'quota_exceeded', window: 'day', retryAfterSeconds: day.resetSeconds, windows };
  if (used.minute >= minute.limit) return { kind: 'refused', code: 'rate_limited', window: 'minute', retryAfterSeconds: minute.resetSeconds, windows };
  return { kind: 'allowed', windows };
}

/** True when a request may be counted: every window still has room. */
export const hasRoom = (used: WindowCounts, limits: Limits): boolean =>
  used.minute < limits.perMinute && used.day < limits.perDay && used.month < limits.perMonth;
