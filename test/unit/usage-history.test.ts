/**
 * Usage history without processes: the in-process recorder and the memory store, with the clock
 * passed in, so a day and a month roll over; the monthly report and its CSV.
 */
import { createMemoryUsageStore } from '../../gateway/usage/memory-usage-store';
import { createUsageRecorder } from '../../gateway/usage/usage-recorder';
import { createRedisUsageStore } from '../../gateway/usage/redis-usage-store';
import type { RedisClient } from '../../gateway/redis/connect';
import { dailyUsage, monthlyReport, reportCsv } from '../../gateway/usage/usage-reports';
import { dayRange, monthParam } from '../../gateway/usage/usage-query';
import type { UsageEntry, UsageStore } from '../../gateway/usage/usage-model';
import { ApiError } from '../../gateway/errors';

const at = (iso: string): number => Date.parse(iso);

describe('usage recorder and memory store', () => {
  it('counts 200s as accepted and the listed refusals by code, per UTC day, and rolls a day and a month', async () => {
    const store = createMemoryUsageStore(() => at('2026-12-01T00:00:00Z'));
    const recorder = createUsageRecorder(store, { flushMs: 60_000 });
    const lastMinuteOfMonth = at('2026-11-30T23:59:59.900Z');
    const firstOfNext = at('2026-12-01T00:00:00.000Z');
    for (let i = 0; i < 5; i++) recorder.record('k1', 200, undefined, lastMinuteOfMonth);
    recorder.record('k1', 429, 'rate_limited', lastMinuteOfMonth);
    recorder.record('k1', 429, 'quota_exceeded', lastMinuteOfMonth);
    recorder.record('k1', 404, 'not_found', lastMinuteOfMonth); // not a refusal of the history's list
    recorder.record('k1', 502, undefined, lastMinuteOfMonth); // neither accepted nor a listed refusal
    for (let i = 0; i < 3; i++) recorder.record('k1', 200, undefined, firstOfNext);
    recorder.record('k2', 400, 'invalid_parameter', firstOfNext);
    await recorder.close();

    const days = await dailyUsage(store, 'k1', '2026-11-29', '2026-12-01');
    expect(days).toEqual({
      key_id: 'k1',
      days: [
        { date: '2026-11-29', accepted: 0, refused: {} },
        { date: '2026-11-30', accepted: 5, refused: { rate_limited: 1, quota_exceeded: 1 } },
        { date: '2026-12-01', accepted: 3, refused: {} },
      ],
    });
    expect(await monthlyReport(store, '2026-11')).toEqual({ month: '2026-11', keys: [{ key_id: 'k1', accepted: 5, refused: { rate_limited: 1, quota_exceeded: 1 } }] });
    expect(await monthlyReport(store, '2026-12')).toEqual({
      month: '2026-12',
      keys: [
        { key_id: 'k1', accepted: 3, refused: {} },
        { key_id: 'k2', accepted: 0, refused: { invalid_parameter: 1 } },
      ],
    });
  });

  it('keeps the counts of a flush that surely failed for the next one, and drops one that may have been applied rather than count twice', async () => {
    const stored: UsageEntry[] = [];
    // Never written: no connection and no offline queue (ioredis' words).
    let failWith: string | undefined = "Stream isn't writeable and enableOfflineQueue options is false";
    const store: UsageStore = {
      add: async (entries) => {
        if (failWith) throw new Error(failWith);
        stored.push(...entries);
      },
      days: async () => new Map(),
      month: async () => new Map(),
    };
    const recorder = createUsageRecorder(store, { flushMs: 60_000 });
    const now = at('2026-11-10T12:00:00Z');
    recorder.record('k', 200, undefined, now);
    await recorder.flush();
    recorder.record('k', 200, undefined, now);
    failWith = undefined;
    await recorder.flush();
    expect(stored).toEqual([{ keyId: 'k', day: '2026-11-10', field: 'accepted', count: 2 }]);

    // Written, then cut: Redis may have run it (unanswered commands are not re-sent after a reconnect).
    for (const cut of ['Command timed out', 'Connection is closed.', 'Reached the max retries per request limit (which is 1).']) {
      failWith = cut;
      recorder.record('k', 200, undefined, now);
      await recorder.flush();
    }
    failWith = undefined;
    await recorder.close();
    expect(stored).toHaveLength(1);
  });

  it('a flush stored in part counts again only the part that failed (a cluster node away), never what was stored', async () => {
    // A Redis whose increments of one key fail until it is back; everything else is applied.
    const hashes = new Map<string, Map<string, number>>();
    let awayKey: string | undefined = 'k-away';
    const redis = {
      hincrby: async (hash: string, field: string, n: number) => {
        if (awayKey && hash.includes(`{${awayKey}}`)) throw new Error("Stream isn't writeable and enableOfflineQueue options is false");
        const h = hashes.get(hash) ?? new Map<string, number>();
        hashes.set(hash, h.set(field, (h.get(field) ?? 0) + n));
        return h.get(field);
      },
      sadd: async () => 1,
      pexpireat: async () => 1,
    };
    const recorder = createUsageRecorder(createRedisUsageStore(redis as unknown as RedisClient), { flushMs: 60_000 });
    const now = at('2026-11-10T12:00:00Z');
    for (const id of ['k-here', 'k-away']) recorder.record(id, 200, undefined, now);
    await recorder.flush();
    awayKey = undefined;
    await recorder.flush();
    expect(hashes.get('lgw:{k-here}:usage:2026-11')?.get('10')).toBe(1);
    expect(hashes.get('lgw:{k-away}:usage:2026-11')?.get('10')).toBe(1);
  });

  it('bounds what it holds while the store fails', async () => {
    // A store that cannot be reached: nothing written, so everything is held for the next flush.
    const store: UsageStore = { add: async () => { throw new Error("Stream isn't writeable and enableOfflineQueue options is false"); }, days: async () => new Map(), month: async () => new Map() };
    const recorder = createUsageRecorder(store, { flushMs: 60_000, maxPending: 10 });
    for (let i = 0; i < 100; i++) recorder.record(`k${i}`, 200, undefined, at('2026-11-10T12:00:00Z'));
    await recorder.flush();
    // The held map is private; what must hold is that a flush that then works writes at most the bound.
    const written: UsageEntry[] = [];
    (store as { add: UsageStore['add'] }).add = async (entries) => void written.push(...entries);
    await recorder.close();
    expect(written.length).toBe(10);
  });
});

describe('monthly report CSV', () => {
  it('has a header starting key_id,accepted and rows that parse and sum to the JSON totals', async () => {
    const store = createMemoryUsageStore(() => at('2026-11-20T00:00:00Z'));
    await store.add([
      { keyId: 'acme', day: '2026-11-01', field: 'accepted', count: 120 },
      { keyId: 'acme', day: '2026-11-02', field: 'accepted', count: 30 },
      { keyId: 'acme', day: '2026-11-02', field: 'rate_limited', count: 4 },
      { keyId: 'beta.co', day: '2026-11-15', field: 'accepted', count: 7 },
      { keyId: 'beta.co', day: '2026-11-15', field: 'invalid_cursor', count: 2 },
    ]);
    const report = await monthlyReport(store, '2026-11');
    const csv = reportCsv(report);
    const [header, ...rows] = csv.trimEnd().split('\r\n').map((l) => l.split(','));
    expect(header!.slice(0, 2)).toEqual(['key_id', 'accepted']);
    const byKey = Object.fromEntries(rows.map((r) => [r[0], Object.fromEntries(header!.map((h, i) => [h, r[i]]))]));
    expect(byKey.acme!.accepted).toBe('150');
    expect(byKey.acme!.refused_rate_limited).toBe('4');
    expect(byKey['beta.co']!.refused_invalid_cursor).toBe('2');
    const sum = rows.reduce((a, r) => a + Number(r[1]), 0);
    expect(sum).toBe(report.keys.reduce((a, k) => a + k.accepted, 0));
    expect(sum).toBe(157);
  });
});

describe('usage query parameters', () => {
  const now = at('2026-11-24T10:00:00Z');
  it('defaults to the last 30 days and refuses bad, reversed or too long ranges', () => {
    expect(dayRange({}, now)).toEqual({ from: '2026-10-26', to: '2026-11-24' });
    expect(dayRange({ from: '2026-02-01', to: '2026-02-28' }, now)).toEqual({ from: '2026-02-01', to: '2026-02-28' });
    for (const bad of [{ from: '2026-02-30' }, { to: 'yesterday' }, { from: '2026-11-25', to: '2026-11-24' }, { from: '2025-01-01', to: '2026-11-24' }]) {
      expect(() => dayRange(bad, now)).toThrow(ApiError);
    }
    expect(monthParam('2026-11')).toBe('2026-11');
    for (const bad of [undefined, '2026-13', '2026-1', 'nov']) expect(() => monthParam(bad)).toThrow(ApiError);
  });
});
