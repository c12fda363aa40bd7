import type { Logger } from 'pino';
import { deadLetterPage } from './dead-letter-page';
import { InFlight } from './in-flight';
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

/** Keeps a pending event that gave up as a dead letter (logged). */
function bury(dead: DeadLetter[], p: Pending, error: string, bounds: DeadLetterBounds, nowMs: number, logger?: Logger): void {
  keepDeadLetter(dead, bounds, nowMs, { id: p.event.id, type: p.event.type, attempts: p.attempt, last_error: error, failed_at: new Date(nowMs).toISOString(), event: JSON.parse(eventBody(p.event)) });
  logger?.warn({ webhook_id: p.event.id, type: p.event.type, attempts: p.attempt, error }, 'webhook gave up: kept in the dead letters');
}

/** The event a dead letter keeps, to queue again under its own id. */
const eventOf = (letter: DeadLetter): WebhookEvent => {
  const e = letter.event;
  return { id: letter.id, type: e.type as WebhookEvent['type'], timestamp: e.timestamp, data: e.data as Record<string, unknown> };
};

/** Marks `key` until `untilMs` unless a mark is still live (false then); past 100,000 marks the expired ones go. */
function claimOnce(once: Map<string, number>, key: string, untilMs: number, nowMs: number): boolean {
  if ((once.get(key) ?? 0) > nowMs) return false;
  once.set(key, untilMs);
  if (once.size > 100_000) for (const [k, until] of once) if (until <= nowMs) once.delete(k);
  return true;
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
  const inFlight = new InFlight();
  let attempt: Attempt | undefined;
  let timer: NodeJS.Timeout | undefined;

  const push = (p: Pending): void => {
    if (queue.length >= MEMORY_QUEUE_LIMIT) {
      const dropped = queue.shift()!;
      logger?.error({ webhook_id: dropped.event.id, type: dropped.event.type }, 'webhook queue full (in memory): oldest event dropped');
    }
    queue.push(p);
    pump();
  };

  function pump(): void {
    if (!attempt) return;
    const t = now();
    for (let i = 0; i < queue.length && inFlight.count < options.concurrency; ) {
      const p = queue[i]!;
      if (p.dueAt > t) {
        i++;
        continue;
      }
      queue.splice(i, 1);
      inFlight.start();
      void attempt(p.event).then((result) => {
        if (!result.ok) {
          const next = afterFailure(p.attempt, p.first, now(), options);
          if ('giveUp' in next) bury(dead, p, result.error, options.deadLetters ?? DEFAULT_DEAD_LETTER_BOUNDS, now(), logger);
          else push({ ...p, attempt: p.attempt + 1, dueAt: next.retryAt });
        }
        inFlight.end();
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
      if (!claimOnce(once, onceKey, onceUntilMs, t)) return false;
      push({ event, attempt: 1, first: t, dueAt: t });
      return true;
    },
    async deadLetterPage(query) {
      return deadLetterPage(dead, query);
    },
    async backlog() {
      const t = now();
      const retrying = queue.filter((p) => p.dueAt > t).length;
      return { queued: queue.length - retrying + inFlight.count, retrying, dead: dead.length };
    },
    async resend(id) {
      const i = dead.findIndex((d) => d.id === id);
      if (i < 0) return false;
      push({ event: eventOf(dead.splice(i, 1)[0]!), attempt: 1, first: now(), dueAt: now() });
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
      await inFlight.settled();
    },
  };
}
