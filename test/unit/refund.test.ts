import { createMemoryCounters } from '../../gateway/limits/memory-counters';
import { toLimits } from '../../gateway/config/gateway-config';

const limits = toLimits({ per_minute: 10, per_day: 100, per_month: 1000 });
const remaining = (d: ReturnType<ReturnType<typeof createMemoryCounters>['peek']>): number[] =>
  d.kind === 'unavailable' ? [] : d.windows.map((w) => w.remaining);

describe('memory counters: refunds', () => {
  const t0 = Date.UTC(2026, 10, 24, 12, 30, 10);

  test('gives one count back in all three windows, never below zero', () => {
    const c = createMemoryCounters();
    c.consume('k', limits, t0);
    c.consume('k', limits, t0);
    c.refund('k', t0);
    expect(remaining(c.peek('k', limits, t0))).toEqual([9, 99, 999]);
    c.refund('k', t0);
    c.refund('k', t0);
    expect(remaining(c.peek('k', limits, t0))).toEqual([10, 100, 1000]);
  });

  test('a window that rolled over since the count is left alone', () => {
    const c = createMemoryCounters();
    c.consume('k', limits, t0);
    const nextMinute = t0 + 60_000;
    c.consume('k', limits, nextMinute); // the minute rolls over: its count restarts
    c.refund('k', t0); // counted in the previous minute: only the day and month give it back
    expect(remaining(c.peek('k', limits, nextMinute))).toEqual([9, 99, 999]);
  });

  test('a refunded request lets a refused one through', () => {
    const c = createMemoryCounters();
    const one = toLimits({ per_minute: 1, per_day: 100, per_month: 1000 });
    expect(c.consume('k', one, t0).kind).toBe('allowed');
    expect(c.consume('k', one, t0).kind).toBe('refused');
    c.refund('k', t0);
    expect(c.consume('k', one, t0).kind).toBe('allowed');
  });
});
