import type { LimitDecision } from '../limits/counters';
import { windowsAt } from '../limits/windows';
import { newEvent, type WebhookEvent } from './webhook-event';

export type QueueOnce = (onceKey: string, onceUntilMs: number, event: WebhookEvent) => Promise<boolean>;

/** Markers outlive their window by a day, so a late instance at the boundary cannot re-send. */
const MARKER_SLACK_MS = 86_400_000;

/**
 * Watches the limit step's decisions for quota thresholds (percent of the daily and monthly quota).
 * The counters return each request's count after it, and the Lua script (or the memory counters)
 * serialises requests, so exactly one request sees a threshold's count reached; the queue's
 * once-marker (per key, window and threshold) makes that exactly once across instances even when
 * counts repeat (counting per instance while Redis is away, a count given back). No I/O unless a
 * threshold is crossed, and then the request does not wait for it.
 */
export function createQuotaWatcher(initialThresholds: readonly number[], queueOnce: QueueOnce, onError: (err: unknown) => void) {
  let thresholds = [...initialThresholds];

  function crossed(keyId: string, window: 'day' | 'month', used: number, limit: number): void {
    for (const pct of thresholds) {
      if (used !== Math.max(1, Math.ceil((limit * pct) / 100))) continue;
      const now = Date.now();
      const bounds = windowsAt(now)[window];
      const event = newEvent('quota.threshold', {
        key_id: keyId,
        window,
        threshold: pct,
        used,
        limit,
        resets_at: new Date(bounds.reset).toISOString(),
      }, now);
      queueOnce(`${keyId}:${window}:${bounds.start}:${pct}`, bounds.reset + MARKER_SLACK_MS, event).catch(onError);
    }
  }

  return {
    /** Called with every decision of the limit step. */
    observe(keyId: string, decision: LimitDecision): void {
      // A count kept by this instance alone while Redis stalls is not the key's use: thresholds are
      // judged on shared counts (or the embedded mode's, which carry no store).
      if (decision.kind !== 'allowed' || decision.store === 'local') return;
      for (const w of decision.windows) {
        if (w.name === 'minute') continue;
        crossed(keyId, w.name, w.limit - w.remaining, w.limit);
      }
    },
    update(next: readonly number[]): void {
      thresholds = [...next];
    },
  };
}

export type QuotaWatcher = ReturnType<typeof createQuotaWatcher>;
