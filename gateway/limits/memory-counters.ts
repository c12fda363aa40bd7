import { systemClock, type Clock } from '../clock';
import type { Limits } from '../config/gateway-config';
import type { Counters, LimitDecision } from './counters';
import { decide, hasRoom, type WindowCounts } from './decide';
import { windowsAt, type WindowBounds, type WindowName } from './windows';

interface KeyWindows {
  starts: Record<WindowName, number>;
  counts: Record<WindowName, number>;
}

/**
 * In-process fixed-window counters on UTC calendar windows, the embedded default.
 * Check and increment happen in one synchronous step, so concurrent requests of one process can
 * never overshoot a limit, and a refused request changes nothing. Windows are plain numbers
 * compared with the calendar, not timers: a month-long window is no problem (unlike
 * rate-limiter-flexible's memory store, whose windows are setTimeout-bound to ~24.8 days).
 * Memory: one small object per key id that has been used.
 */
export interface MemoryCounters extends Counters {
  consume(keyId: string, limits: Limits, nowMs?: number): LimitDecision;
  peek(keyId: string, limits: Limits, nowMs?: number): LimitDecision;
  refund(keyId: string, countedAtMs: number): void;
}

/** `clock` tells the instant of a request that names none (default: the system clock). */
export function createMemoryCounters(clock: Clock = systemClock): MemoryCounters {
  const byKey = new Map<string, KeyWindows>();

  /** The key's counters, rolled over to the windows `bounds` (of the request's instant). */
  function current(keyId: string, bounds: Record<WindowName, WindowBounds>): KeyWindows {
    let entry = byKey.get(keyId);
    if (!entry) {
      entry = {
        starts: { minute: bounds.minute.start, day: bounds.day.start, month: bounds.month.start },
        counts: { minute: 0, day: 0, month: 0 },
      };
      byKey.set(keyId, entry);
    }
    for (const name of ['minute', 'day', 'month'] as const) {
      if (entry.starts[name] !== bounds[name].start) {
        entry.starts[name] = bounds[name].start;
        entry.counts[name] = 0;
      }
    }
    return entry;
  }

  return {
    consume(keyId: string, limits: Limits, nowMs = clock.now()): LimitDecision {
      const bounds = windowsAt(nowMs);
      const entry = current(keyId, bounds);
      const used: WindowCounts = { ...entry.counts };
      if (!hasRoom(used, limits)) return decide(used, limits, nowMs, false, bounds);
      entry.counts.minute++;
      entry.counts.day++;
      entry.counts.month++;
      return decide(used, limits, nowMs, true, bounds);
    },
    peek(keyId: string, limits: Limits, nowMs = clock.now()): LimitDecision {
      const bounds = windowsAt(nowMs);
      return decide({ ...current(keyId, bounds).counts }, limits, nowMs, false, bounds);
    },
    refund(keyId: string, countedAtMs: number): void {
      const entry = byKey.get(keyId);
      if (!entry) return;
      const bounds = windowsAt(countedAtMs);
      for (const name of ['minute', 'day', 'month'] as const) {
        // A window that has rolled over since holds other requests' counts: nothing to give back there.
        if (entry.starts[name] === bounds[name].start && entry.counts[name] > 0) entry.counts[name]--;
      }
    },
  };
}
