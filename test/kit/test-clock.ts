/**
 * A clock the tests hold (gateway/clock.ts): it stands still until told to move, so a suite on an
 * in-process gateway chooses the instant of each request (e.g. mid-minute, or one ms before the
 * next minute) instead of dodging the calendar's edges or sleeping for a window to pass.
 */
import type { Clock } from '../../gateway/clock';

export interface TestClock extends Clock {
  /** Sets the time to `ms` since the epoch. */
  set(ms: number): void;
  /** Moves the time on by `ms`. */
  advance(ms: number): void;
}

/** 2030-01-15T12:00:30Z: the middle of a minute, well inside its day and month. */
export const MID_MINUTE_MS = Date.UTC(2030, 0, 15, 12, 0, 30);

/** A clock standing at `startMs` (default: the middle of a minute, MID_MINUTE_MS). */
export function testClock(startMs = MID_MINUTE_MS): TestClock {
  let nowMs = startMs;
  return {
    now: () => nowMs,
    set(ms) {
      nowMs = ms;
    },
    advance(ms) {
      nowMs += ms;
    },
  };
}
