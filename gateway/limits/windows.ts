/** The three limit windows. All are UTC calendar windows: the minute, the day, the month. */
export type WindowName = 'minute' | 'day' | 'month';

export interface WindowBounds {
  /** Start of the window, ms since the epoch; identifies the window. */
  readonly start: number;
  /** Start of the next window, when the counter resets. */
  readonly reset: number;
}

const MINUTE_MS = 60_000;

/** The bounds of each window containing `nowMs`. Pure. */
export function windowsAt(nowMs: number): Record<WindowName, WindowBounds> {
  const minuteStart = nowMs - (nowMs % MINUTE_MS);
  const d = new Date(nowMs);
  const y = d.getUTCFullYear();
  const m = d.getUTCMonth();
  const dayStart = Date.UTC(y, m, d.getUTCDate());
  return {
    minute: { start: minuteStart, reset: minuteStart + MINUTE_MS },
    day: { start: dayStart, reset: dayStart + 86_400_000 },
    month: { start: Date.UTC(y, m, 1), reset: Date.UTC(y, m + 1, 1) },
  };
}

/** Whole seconds until `resetMs`, at least 1 (the form `Retry-After` needs). */
export const secondsUntil = (resetMs: number, nowMs: number): number => Math.max(1, Math.ceil((resetMs - nowMs) / 1000));
