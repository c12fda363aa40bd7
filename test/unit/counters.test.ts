import { createMemoryCounters } from '../../gateway/limits/memory-counters';
import { windowsAt, secondsUntil } from '../../gateway/limits/windows';

const limits = { perMinute: 3, perDay: 5, perMonth: 8 };
const t0 = Date.UTC(2026, 0, 31, 23, 58, 30); // 31 Jan, 23:58:30 UTC

describe('UTC calendar windows', () => {
  it('cuts minute, day and month at UTC boundaries', () => {
    const w = windowsAt(t0);
    expect(w.minute.reset).toBe(Date.UTC(2026, 0, 31, 23, 59));
    expect(w.day.reset).toBe(Date.UTC(2026, 1, 1));
    expect(w.month.start).toBe(Date.UTC(2026, 0, 1));
    expect(w.month.reset).toBe(Date.UTC(2026, 1, 1));
    expect(windowsAt(Date.UTC(2026, 11, 15)).month.reset).toBe(Date.UTC(2027, 0, 1));
    expect(secondsUntil(t0 + 100, t0)).toBe(1);
    expect(secondsUntil(t0, t0)).toBe(1);
  });
});

describe('memory counters', () => {
  it('allows exactly the per-minute limit, then refuses without counting', () => {
    const c = createMemoryCounters();
    const kinds = Array.from({ length: 5 }, () => c.consume('k', limits, t0));
    expect(kinds.map((d) => (d as { kind: string }).kind)).toEqual(['allowed', 'allowed', 'allowed', 'refused', 'refused']);
    const refused = kinds[3] as unknown as { code: string; retryAfterSeconds: number; windows: Array<{ name: string; remaining: number }> };
    expect(refused.code).toBe('rate_limited');
    expect(refused.retryAfterSeconds).toBe(30);
    // The refusals consumed nothing: the day still has 2 of 5.
    expect(refused.windows.find((w) => w.name === 'day')!.remaining).toBe(2);
  });

  it('resets the minute at the next UTC minute and then hits the daily quota', () => {
    const c = createMemoryCounters();
    for (let i = 0; i < 3; i++) c.consume('k', limits, t0);
    const nextMinute = t0 + 30_000;
    expect(c.consume('k', limits, nextMinute).kind).toBe('allowed');
    expect(c.consume('k', limits, nextMinute).kind).toBe('allowed');
    const d = c.consume('k', limits, nextMinute) as { kind: string; code: string; retryAfterSeconds: number };
    expect(d).toMatchObject({ kind: 'refused', code: 'quota_exceeded' });
    expect(d.retryAfterSeconds).toBe(60); // midnight UTC is 60 s after 23:59:00
  });

  it('answers quota_exceeded when the minute and a quota are both spent, with the month reset when the month is spent', () => {
    const c = createMemoryCounters();
    const tight = { perMinute: 2, perDay: 10, perMonth: 2 };
    c.consume('k', tight, t0);
    c.consume('k', tight, t0);
    const d = c.consume('k', tight, t0) as { code: string; retryAfterSeconds: number };
    expect(d.code).toBe('quota_exceeded');
    expect(d.retryAfterSeconds).toBe(90); // 1 Feb 00:00 UTC
    // A new month starts fresh.
    expect(c.consume('k', tight, Date.UTC(2026, 1, 1, 0, 0, 1)).kind).toBe('allowed');
  });

  it('keeps keys apart and peek counts nothing', () => {
    const c = createMemoryCounters();
    c.consume('a', limits, t0);
    expect(c.peek('b', limits, t0)).toMatchObject({ kind: 'allowed' });
    const peeked = c.peek("a", limits, t0) as unknown as { windows: Array<{ remaining: number }> };
    expect(peeked.windows[0]!.remaining).toBe(2);
    expect((c.peek("a", limits, t0) as unknown as { windows: Array<{ remaining: number }> }).windows[0]!.remaining).toBe(2);
  });
});
