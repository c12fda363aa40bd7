import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { RedisClient as Redis } from '../redis/connect';
import type { Logger } from 'pino';
import { BURY, buryArgs, createRedisDeadLetters, deadLetterKeys, type StoredDead } from './redis-dead-letters';
import { afterFailure, DEFAULT_DEAD_LETTER_BOUNDS, type Attempt, type DeliveryOptions, type WebhookQueue } from './webhook-queue';
import type { WebhookEvent } from './webhook-event';

/**
 * Redis layout of the webhook queue. One hash tag for all of it, so the scripts and transactions
 * below touch one slot and run unchanged on a cluster (events are rare: one slot is plenty).
 */
export const webhookKeys = {
  /** Events to deliver now: a stream read by the consumer group `deliverers`. */
  stream: 'lgw:{webhooks}:events',
  /** Failed events waiting for their next attempt: a sorted set scored by the time it is due. */
  retry: 'lgw:{webhooks}:retry',
  /** Events that gave up: a hash, id → dead letter (JSON), ordered by its index (redis-dead-letters.ts). */
  dead: deadLetterKeys.letters,
  deadIndex: deadLetterKeys.index,
  /** "Some instance delivers": set, with a TTL, by every instance with WEBHOOK_URL (the CLI emits key events only then). */
  on: 'lgw:{webhooks}:on',
  /** Exactly-once markers of quota thresholds. */
  once: (name: string) => `lgw:{webhooks}:once:${name}`,
} as const;
const GROUP = 'deliverers';
/** A safety bound on the stream; far above what events need (a few per key and day). */
const STREAM_MAXLEN = 1_000_000;

/** Queues the event unless the marker exists; marker and event in one atomic step. */
const ENQUEUE_ONCE = `
if redis.call('SET', KEYS[2], '1', 'NX', 'PXAT', ARGV[1]) then
  redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[4], '*', 'event', ARGV[2], 'attempt', '1', 'first', ARGV[3])
  return 1
end
return 0
`;
/** Moves due retries back into the stream; atomic, so two instances never move one twice. */
const PROMOTE = `
local due = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', ARGV[1], 'LIMIT', 0, 100)
for _, member in ipairs(due) do
  redis.call('ZREM', KEYS[2], member)
  local e = cjson.decode(member)
  redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[2], '*', 'event', e.event, 'attempt', e.attempt, 'first', e.first)
end
return #due
`;
type StreamEntry = [id: string, fields: string[]];
const fieldsOf = (raw: string[]): Record<string, string> => {
  const out: Record<string, string> = {};
  for (let i = 0; i + 1 < raw.length; i += 2) out[raw[i]!] = raw[i + 1]!;
  return out;
};

/** Queues one event in the Redis stream (what the key tools need, without delivering). */
export async function enqueueEvent(redis: Redis, event: WebhookEvent): Promise<void> {
  await redis.xadd(webhookKeys.stream, 'MAXLEN', '~', STREAM_MAXLEN, '*', 'event', JSON.stringify(event), 'attempt', '1', 'first', String(Date.now()));
}

/** The dead letters in Redis: paged and re-sent by the admin API and the CLI, which do not deliver. */
export function redisDeadLetters(redis: Redis): Pick<WebhookQueue, 'deadLetterPage' | 'resend'> & { indexUnindexed(): Promise<number> } {
  return createRedisDeadLetters(redis, webhookKeys.stream, STREAM_MAXLEN);
}

export interface RedisQueueOptions extends DeliveryOptions {
  /** A pending delivery idle this long belongs to an instance that died: another takes it over. */
  readonly reclaimIdleMs: number;
}

/**
 * The durable queue: a Redis stream and consumer group, so any instance delivers and a restart loses
 * nothing. An event is acknowledged and deleted from the stream only once it was delivered, moved to
 * the retry set, or given up (one MULTI each); an instance that dies mid-delivery leaves it pending,
 * and `XAUTOCLAIM` hands it to another after `reclaimIdleMs`. Delivery is at least once: a receiver
 * de-duplicates on `webhook-id` (the Standard Webhooks rule) for the rare crash between its 2xx and
 * the acknowledgement.
 *
 * `redis` serves the commands; `blocking` (its own connection) waits in XREADGROUP BLOCK. Only the
 * second is needed when delivering; the CLI builds it with `redis` alone.
 */
export function createRedisWebhookQueue(redis: Redis, options: RedisQueueOptions, logger?: Logger, blocking?: Redis): WebhookQueue {
  const bounds = options.deadLetters ?? DEFAULT_DEAD_LETTER_BOUNDS;
  const deadLetters = redisDeadLetters(redis);
  const consumer = `${hostname()}-${process.pid}-${randomBytes(4).toString('hex')}`;
  let running = false;
  let inFlight = 0;
  let wake: (() => void) | undefined;
  const idle: Array<() => void> = [];
  const timers: NodeJS.Timeout[] = [];
  let attempt: Attempt | undefined;
  let warnedAt = 0;

  const warnSometimes = (err: unknown, what: string): void => {
    if (Date.now() - warnedAt < 30_000) return;
    warnedAt = Date.now();
    logger?.warn({ err: (err as Error)?.message }, `webhooks: ${what} failed; retrying`);
  };

  async function handle(entryId: string, raw: string[]): Promise<void> {
    const f = fieldsOf(raw);
    let event: WebhookEvent;
    try {
      event = JSON.parse(f.event ?? '') as WebhookEvent;
    } catch {
      await redis.multi().xack(webhookKeys.stream, GROUP, entryId).xdel(webhookKeys.stream, entryId).exec();
      return;
    }
    const attemptNo = Number(f.attempt ?? 1);
    const first = Number(f.first ?? Date.now());
    const result = await attempt!(event);
    const tx = redis.multi();
    if (!result.ok) {
      const next = afterFailure(attemptNo, first, Date.now(), options);
      if ('giveUp' in next) {
        const dead: StoredDead = { event: f.event!, attempts: attemptNo, last_error: result.error, failed_at: new Date().toISOString() };
        tx.eval(BURY, 2, webhookKeys.dead, webhookKeys.deadIndex, ...buryArgs(event.id, dead, bounds, Date.now()));
        logger?.warn({ webhook_id: event.id, type: event.type, attempts: attemptNo, error: result.error }, 'webhook gave up: kept in the dead letters');
      } else {
        // Numbers as text: Lua's cjson would turn a millisecond time into a float.
        tx.zadd(webhookKeys.retry, next.retryAt, JSON.stringify({ event: f.event, attempt: String(attemptNo + 1), first: String(first) }));
        logger?.debug({ webhook_id: event.id, attempt: attemptNo, error: result.error }, 'webhook delivery failed; retry scheduled');
      }
    }
    await tx.xack(webhookKeys.stream, GROUP, entryId).xdel(webhookKeys.stream, entryId).exec();
  }

  const run = (entries: StreamEntry[]): void => {
    for (const [entryId, raw] of entries) {
      inFlight++;
      handle(entryId, raw)
        // Left pending: it is taken over after reclaimIdleMs (by this instance too).
        .catch((err) => warnSometimes(err, 'recording a delivery'))
        .finally(() => {
          inFlight--;
          wake?.();
          if (inFlight === 0) idle.splice(0).forEach((r) => r());
        });
    }
  };

  async function ensureGroup(): Promise<void> {
    try {
      await redis.xgroup('CREATE', webhookKeys.stream, GROUP, '0', 'MKSTREAM');
    } catch (err) {
      if (!String((err as Error).message).includes('BUSYGROUP')) throw err;
    }
  }

  async function readLoop(): Promise<void> {
    let groupReady = false;
    while (running) {
      const free = options.concurrency - inFlight;
      if (free <= 0) {
        await new Promise<void>((r) => (wake = r));
        wake = undefined;
        continue;
      }
      try {
        if (!groupReady) {
          await ensureGroup();
          groupReady = true;
        }
        const answer = (await blocking!.xreadgroup('GROUP', GROUP, consumer, 'COUNT', free, 'BLOCK', Math.max(100, options.pollMs), 'STREAMS', webhookKeys.stream, '>')) as Array<[string, StreamEntry[]]> | null;
        if (running && answer) run(answer[0]![1]);
      } catch (err) {
        if (!running) return;
        if (String((err as Error).message).includes('NOGROUP')) groupReady = false;
        warnSometimes(err, 'reading the queue');
        await new Promise((r) => setTimeout(r, 1000));
      }
    }
  }

  const every = (ms: number, work: () => Promise<unknown>): void => {
    let busy = false;
    const timer = setInterval(() => {
      if (busy || !running) return;
      busy = true;
      work().catch((err) => warnSometimes(err, 'queue upkeep')).finally(() => (busy = false));
    }, ms);
    timer.unref();
    timers.push(timer);
  };

  return {
    enqueue: (event) => enqueueEvent(redis, event),
    async enqueueOnce(onceKey, onceUntilMs, event) {
      const queued = await redis.eval(ENQUEUE_ONCE, 2, webhookKeys.stream, webhookKeys.once(onceKey), onceUntilMs, JSON.stringify(event), Date.now(), STREAM_MAXLEN);
      return queued === 1;
    },
    deadLetterPage: (query) => deadLetters.deadLetterPage(query),
    resend: (id) => deadLetters.resend(id),
    async backlog() {
      const replies = (await redis.multi().xlen(webhookKeys.stream).zcard(webhookKeys.retry).hlen(webhookKeys.dead).exec()) ?? [];
      const [queued, retrying, dead] = replies.map(([err, n]) => (err ? 0 : Number(n)));
      return { queued: queued ?? 0, retrying: retrying ?? 0, dead: dead ?? 0 };
    },
    startDelivery(a) {
      if (!blocking) throw new Error('delivering needs a blocking connection');
      attempt = a;
      running = true;
      void readLoop();
      void deadLetters.indexUnindexed().catch((err) => warnSometimes(err, 'indexing older dead letters'));
      every(options.pollMs, () => redis.eval(PROMOTE, 2, webhookKeys.stream, webhookKeys.retry, Date.now(), STREAM_MAXLEN));
      every(Math.max(options.pollMs, Math.floor(options.reclaimIdleMs / 2)), async () => {
        const free = options.concurrency - inFlight;
        if (free <= 0) return;
        const [, entries] = (await redis.xautoclaim(webhookKeys.stream, GROUP, consumer, options.reclaimIdleMs, '0-0', 'COUNT', free)) as [string, StreamEntry[]];
        run(entries.filter((e) => e && e[1]));
      });
      // Tell the key tools that events are delivered (refreshed well within its TTL).
      const announce = () => redis.set(webhookKeys.on, consumer, 'PX', 60_000);
      const announceNow = (): void => void announce().catch((err) => warnSometimes(err, 'announcing delivery'));
      if (redis.status === 'ready') announceNow();
      redis.on('ready', announceNow); // at start-up and after every reconnection
      every(20_000, announce);
    },
    async close() {
      running = false;
      timers.forEach(clearInterval);
      wake?.();
      blocking?.disconnect();
      if (inFlight > 0) await Promise.race([new Promise<void>((r) => idle.push(r)), new Promise((r) => setTimeout(r, 2000).unref())]);
    },
  };
}
