// gateway/webhooks/: quota notifications and key events: the watcher, signer, Redis stream and memory queues,
// the delivery loop, bounded dead letters and the /admin/webhooks routes.
import type { DeadLetterPage } from './dead-letter-page';
import type { WebhookEvent } from './webhook-event';
import { retryDelayMs } from './backoff';

export interface DeliveryOptions {
  /** First retry wait; doubled per attempt. */
  readonly retryBaseMs: number;
  /** Cap of one wait. */
  readonly retryMaxMs: number;
  /** An event still failing this long after it was queued goes to the dead letters. */
  readonly giveUpAfterMs: number;
  /** Deliveries in flight at once per instance: with the timeout, this bounds what a slow receiver can hold. */
  readonly concurrency: number;
  /** How often due retries are looked for. */
  readonly pollMs: number;
  /** Dead letters kept (default DEFAULT_DEAD_LETTER_BOUNDS). */
  readonly deadLetters?: DeadLetterBounds;
}

/** The outcome of a failed attempt: when to try again, or give up. Pure. */
export function afterFailure(attempt: number, firstMs: number, nowMs: number, o: DeliveryOptions): { retryAt: number } | { giveUp: true } {
  if (nowMs - firstMs >= o.giveUpAfterMs) return { giveUp: true };
  return { retryAt: nowMs + retryDelayMs(attempt, o.retryBaseMs, o.retryMaxMs) };
}

/** Events not yet delivered (gateway_webhook_backlog): due or in flight, waiting for a retry, given up. */
export interface WebhookBacklog {
  readonly queued: number;
  readonly retrying: number;
  readonly dead: number;
}

/**
 * How many dead letters are kept, and how long: past either bound the oldest are dropped when a new
 * one is kept (WEBHOOK_DEAD_MAX, WEBHOOK_DEAD_MAX_AGE_MS).
 */
export interface DeadLetterBounds {
  readonly maxCount: number;
  readonly maxAgeMs: number;
}

/** 10,000 letters, 30 days. */
export const DEFAULT_DEAD_LETTER_BOUNDS: DeadLetterBounds = { maxCount: 10_000, maxAgeMs: 30 * 86_400_000 };

/** A send attempt: signs and POSTs; `ok` on a 2xx. */
export type Attempt = (event: WebhookEvent) => Promise<{ ok: true } | { ok: false; error: string }>;

/**
 * The queue of events to deliver: in Redis (durable, shared: any instance delivers, a restart loses
 * nothing) or in memory (the embedded mode: best effort, lost on restart).
 */
export interface WebhookQueue {
  /** Stores the event for delivery; resolves once it is queued. */
  enqueue(event: WebhookEvent): Promise<void>;
  /**
   * Queues the event unless `onceKey` was used already (until `onceUntilMs`), as one atomic step:
   * of all instances that see the same crossing, exactly one queues it. Resolves whether it did.
   */
  enqueueOnce(onceKey: string, onceUntilMs: number, event: WebhookEvent): Promise<boolean>;
  /** One page of dead letters, oldest failure first (`limit` 1..1000, default 100; `cursor`). */
  deadLetterPage(query: { limit?: number; cursor?: string }): Promise<DeadLetterPage>;
  /** How many events wait, by state (counted, not read). */
  backlog(): Promise<WebhookBacklog>;
  /** Moves a dead letter back to the queue (a fresh 24 h of retries); false when there is none with that id. */
  resend(id: string): Promise<boolean>;
  /** Starts delivering with `attempt` (only instances with WEBHOOK_URL call it). */
  startDelivery(attempt: Attempt): void;
  /** Stops delivering; waits a little for deliveries in flight (the rest are taken over later). */
  close(): Promise<void>;
}
