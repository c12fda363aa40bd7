import type { Logger } from 'pino';
import { dayOf } from './usage-dates';
import { isRefusalCode, mayHaveApplied, PartialUsageWrite, type UsageEntry, type UsageField, type UsageStore } from './usage-model';

export interface UsageRecorder {
  /**
   * Counts one answer to an identified key: `accepted` for a 200, its code for a refusal of the
   * history's list; anything else is ignored. In memory only: no I/O on the request's way.
   */
  record(keyId: string, status: number, code: string | undefined, nowMs?: number): void;
  /** Writes what was counted since the last flush (also run every `flushMs`). */
  flush(): Promise<void>;
  /** Stops the timer and flushes a last time (graceful shutdown). */
  close(): Promise<void>;
}

export interface RecorderOptions {
  readonly flushMs: number;
  /** Distinct (key, day, outcome) counts held when the store keeps failing; beyond, new ones are dropped and logged. */
  readonly maxPending?: number;
  readonly logger?: Logger;
}

const SEP = '\u0000';

/**
 * Aggregates answers per key, UTC day and outcome in this process and adds them to the store every
 * `flushMs`: the public path gains no Redis round trip, accepted or refused. What a crash (not a
 * graceful stop) can lose: the counts of the last `flushMs` of this instance. A failed flush keeps
 * for the next one what was surely not stored: a flush stored in part keeps only the part that
 * failed (PartialUsageWrite), and what timed out may have been applied, so adding it again could
 * bill twice: it is dropped and logged.
 */
export function createUsageRecorder(store: UsageStore, options: RecorderOptions): UsageRecorder {
  const maxPending = options.maxPending ?? 100_000;
  let pending = new Map<string, number>();
  let dropped = 0;
  // The day string changes once a day: computed once per day, not per request.
  let dayEnd = 0;
  let dayStart = 0;
  let today = '';

  const dayAt = (nowMs: number): string => {
    if (nowMs >= dayStart && nowMs < dayEnd) return today;
    const day = dayOf(nowMs);
    if (nowMs >= dayEnd) {
      dayStart = nowMs - (nowMs % 86_400_000);
      dayEnd = dayStart + 86_400_000;
      today = day;
    }
    return day;
  };

  const add = (key: string, n: number): void => {
    const had = pending.get(key);
    if (had === undefined && pending.size >= maxPending) {
      dropped += n;
      return;
    }
    pending.set(key, (had ?? 0) + n);
  };

  let flushing: Promise<void> = Promise.resolve();
  const flushNow = async (): Promise<void> => {
    if (dropped > 0) {
      options.logger?.error({ dropped }, 'usage history: counts dropped, the store has been failing and the pending counts reached their bound');
      dropped = 0;
    }
    if (pending.size === 0) return;
    const batch = pending;
    pending = new Map();
    const entries: UsageEntry[] = [];
    for (const [key, count] of batch) {
      const [keyId, day, field] = key.split(SEP) as [string, string, UsageField];
      entries.push({ keyId, day, field, count });
    }
    try {
      await store.add(entries);
    } catch (err) {
      const message = (err as Error)?.message ?? String(err);
      // Only what was surely not applied is counted again: what timed out may have been.
      const partial = err instanceof PartialUsageWrite;
      const uncertain = partial ? err.uncertain : mayHaveApplied(err) ? entries.length : 0;
      if (uncertain > 0) {
        options.logger?.error({ err: message, uncertain }, 'usage history: a flush timed out and may or may not have been stored; not retried, to never count twice');
      }
      const retry = partial ? err.retry : uncertain > 0 ? [] : entries;
      if (retry.length) options.logger?.warn({ err: message, counts: retry.length }, 'usage history: flush failed; kept for the next one');
      for (const e of retry) add(`${e.keyId}${SEP}${e.day}${SEP}${e.field}`, e.count);
    }
  };
  const flush = (): Promise<void> => (flushing = flushing.then(flushNow));

  const timer = setInterval(() => void flush(), options.flushMs);
  timer.unref();

  return {
    record(keyId, status, code, nowMs = Date.now()) {
      let field: UsageField;
      if (status === 200) field = 'accepted';
      else if (code !== undefined && isRefusalCode(code)) field = code;
      else return;
      add(`${keyId}${SEP}${dayAt(nowMs)}${SEP}${field}`, 1);
    },
    flush,
    async close() {
      clearInterval(timer);
      await flush();
    },
  };
}
