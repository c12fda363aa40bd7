import type { Logger } from 'pino';
import { deadLetterPage } from './dead-letter-page';
import type { DeadLetter } from './dead-letter';
import { afterFailure, DEFAULT_DEAD_LETTER_BOUNDS, type Attempt, type DeadLetterBounds, type DeliveryOptions, type WebhookQueue } from './webhook-queue';
import { eventBody, type WebhookEvent } from './webhook-event';

interface Pending {
  readonly event: WebhookEvent;
  attempt: number;
  readonly first: number;
  dueAt: number;
}

/** Bounds of the embedded mode's queue: memory stays bounded whatever the receiver does. */
export const MEMORY_QUEUE_LIMIT = 10_000;
export const MEMORY_DEAD_LIMIT = 1_000;

/** Keeps a letter; `dead` is in failure order, so the oldest are at the front, dropped past either bound. */
function keepDeadLetter(dead: DeadLetter[], bounds: DeadLetterBounds, nowMs: number, letter: DeadLetter): void {
  const oldestKept = new Date(nowMs - bounds.maxAgeMs).toISOString();
  while (dead.length && (dead.length >= Math.min(MEMORY_DEAD_LIMIT, bounds.maxCount) || dead[0]!.failed_at < oldestKept)) dead.shift();
  dead.push(letter);
}

/**
 * The embedded mode's queue: in this process's memory, best effort. The same retries and dead
 * letters as with Redis, but a restart loses what is queued, and each instance delivers its own
 * events. Over `MEMORY_QUEUE_LIMIT` events waiting, the oldest is dropped (logged).
 */
export function createMemoryWebhookQueue(options: DeliveryOptions, logger?: Logger, now: () => number = Date.now): WebhookQueue {
  const queue: Pending[] = [];
  const dead: DeadLetter[] = [];
  const once = new Map<string, number>();
  let inFlight = 0;
  let attempt: Attempt | undefined;
  let timer: NodeJS.Timeout | undefined;
  const idle: Array<() => void> = [];

  const push = (p: Pending): void => {
    if (queue.length >= MEMORY_QUEUE_LIMIT) {
      const dropped = queue.shift()!;
      logger?.error({ webhook_id: dropped.event.id, type: dropped.event.type }, 'webhook queue full (in memory): oldest event dropped');
    }
    queue.push(p);
    pump();
  };

  const toDead = (p: Pending, error: string): void => {
    keepDeadLetter(dead, options.deadLetters ?? DEFAULT_DEAD_LETTER_BOUNDS, now(), { id: p.event.id, type: p.event.type, attempts: p.attempt, last_error: error, failed_at: new Date(now()).toISOString(), event: JSON.parse(eventBody(p.event)) });
    logger?.warn({ webhook_id: p.event.id, type: p.event.type, attempts: p.attempt, error }, 'webhook gave up: kept in the dead letters');
  };

  function pump(): void {
    if (!attempt) return;
    const t = now();
    for (let i = 0; i < queue.length && inFlight < options.concurrency; ) {
      const p = queue[i]!;
      if (p.dueAt > t) {
        i++;
        continue;
      }
      queue.splice(i, 1);
      inFlight++;
      void attempt(p.event).then((result) => {
        inFlight--;
        if (!result.ok) {
          const next = afterFailure(p.attempt, p.first, now(), options);
          if ('giveUp' in next) toDead(p, result.error);
          else push({ ...p, attempt: p.attempt + 1, dueAt: next.retryAt });
        }
        if (inFlight === 0) idle.splice(0).forEach((f) => f());
        pump();
      });
    }
  }

  return {
    async enqueue(event) {
      push({ event, attempt: 1, first: now(), dueAt: now() });
    },
    async enqueueOnce(onceKey, onceUntilMs, event) {
      const t = now();
      if ((once.get(onceKey) ?? 0) > t) return false;
      once.set(onceKey, onceUntilMs);
      if (once.size > 100_000) for (const [k, until] of once) if (until <= t) once.delete(k);
      push({ event, attempt: 1, first: t, dueAt: t });
      return true;
    },
    async deadLetterPage(query) {
      return deadLetterPage(dead, query);
    },
    async backlog() {
      const t = now();
      const retrying = queue.filter((p) => p.dueAt > t).length;
      return { queued: queue.length - retrying + inFlight, retrying, dead: dead.length };
    },
    async resend(id) {
      const i = dead.findIndex((d) => d.id === id);
      if (i < 0) return false;
      const [letter] = dead.splice(i, 1);
      const e = letter!.event;
      push({ event: { id, type: e.type as WebhookEvent['type'], timestamp: e.timestamp, data: e.data as Record<string, unknown> }, attempt: 1, first: now(), dueAt: now() });
      return true;
    },
    startDelivery(a) {
      attempt = a;
      timer = setInterval(pump, options.pollMs);
      timer.unref();
      pump();
    },
    async close() {
      if (timer) clearInterval(timer);
      attempt = undefined;
      if (inFlight > 0) await Promise.race([new Promise<void>((r) => idle.push(r)), new Promise((r) => setTimeout(r, 2000).unref())]);
    },
  };
}
