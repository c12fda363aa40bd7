/**
 * The Redis queue's delivery loop: reads the stream as one consumer of the group, settles each
 * attempt (acknowledged, moved to the retry set, or buried), promotes due retries, takes over
 * deliveries idle too long, and announces that events are delivered. The queue itself: redis-webhook-queue.ts.
 */
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { Logger } from 'pino';
import type { RedisClient as Redis } from '../redis/connect';
import { InFlight } from './in-flight';
import { BURY, buryArgs, type StoredDead } from './redis-dead-letters';
import type { WebhookEvent } from './webhook-event';
import { afterFailure, type Attempt, type DeadLetterBounds, type DeliveryOptions } from './webhook-queue';

/** The queue's keys the loop uses (redis-webhook-queue.ts `webhookKeys`). */
export interface DeliveryKeys {
  readonly stream: string;
  readonly retry: string;
  readonly dead: string;
  readonly deadIndex: string;
  readonly on: string;
}

export interface RedisQueueOptions extends DeliveryOptions {
  /** A pending delivery idle this long belongs to an instance that died: another takes it over. */
  readonly reclaimIdleMs: number;
}

export interface DeliverySettings extends RedisQueueOptions {
  readonly bounds: DeadLetterBounds;
  readonly streamMaxLen: number;
}

const GROUP = 'deliverers';
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

/** One instance's delivery: `start` once with the send attempt, `close` on shutdown. */
export class RedisWebhookDelivery {
  readonly consumer = `${hostname()}-${process.pid}-${randomBytes(4).toString('hex')}`;
  private running = false;
  private readonly inFlight = new InFlight();
  private wake: (() => void) | undefined;
  private readonly timers: NodeJS.Timeout[] = [];
  private attempt: Attempt | undefined;
  private warnedAt = 0;

  constructor(
    private readonly redis: Redis,
    private readonly blocking: Redis,
    private readonly keys: DeliveryKeys,
    private readonly settings: DeliverySettings,
    private readonly logger?: Logger,
  ) {}

  /** Starts reading, promoting retries, taking over idle deliveries and announcing. */
  start(attempt: Attempt, onStart: () => Promise<unknown>): void {
    const { redis, keys, settings } = this;
    this.attempt = attempt;
    this.running = true;
    void this.readLoop();
    void onStart().catch((err) => this.warnSometimes(err, 'indexing older dead letters'));
    this.every(settings.pollMs, () => redis.eval(PROMOTE, 2, keys.stream, keys.retry, Date.now(), settings.streamMaxLen));
    this.every(Math.max(settings.pollMs, Math.floor(settings.reclaimIdleMs / 2)), () => this.reclaim());
    // Tell the key tools that events are delivered (refreshed well within its TTL).
    const announce = () => redis.set(keys.on, this.consumer, 'PX', 60_000);
    const announceNow = (): void => void announce().catch((err) => this.warnSometimes(err, 'announcing delivery'));
    if (redis.status === 'ready') announceNow();
    redis.on('ready', announceNow); // at start-up and after every reconnection
    this.every(20_000, announce);
  }

  async close(): Promise<void> {
    this.running = false;
    this.timers.forEach(clearInterval);
    this.wake?.();
    this.blocking.disconnect();
    await this.inFlight.settled();
  }

  private warnSometimes(err: unknown, what: string): void {
    if (Date.now() - this.warnedAt < 30_000) return;
    this.warnedAt = Date.now();
    this.logger?.warn({ err: (err as Error)?.message }, `webhooks: ${what} failed; retrying`);
  }

  /** Records one attempt's outcome: acknowledged and deleted, with a retry or a dead letter on failure (one MULTI). */
  private async handle(entryId: string, raw: string[]): Promise<void> {
    const { redis, keys, logger } = this;
    const f = fieldsOf(raw);
    let event: WebhookEvent;
    try {
      event = JSON.parse(f.event ?? '') as WebhookEvent;
    } catch {
      await redis.multi().xack(keys.stream, GROUP, entryId).xdel(keys.stream, entryId).exec();
      return;
    }
    const attemptNo = Number(f.attempt ?? 1);
    const first = Number(f.first ?? Date.now());
    const result = await this.attempt!(event);
    const tx = redis.multi();
    if (!result.ok) {
      const next = afterFailure(attemptNo, first, Date.now(), this.settings);
      if ('giveUp' in next) {
        const dead: StoredDead = { event: f.event!, attempts: attemptNo, last_error: result.error, failed_at: new Date().toISOString() };
        tx.eval(BURY, 2, keys.dead, keys.deadIndex, ...buryArgs(event.id, dead, this.settings.bounds, Date.now()));
        logger?.warn({ webhook_id: event.id, type: event.type, attempts: attemptNo, error: result.error }, 'webhook gave up: kept in the dead letters');
      } else {
        // Numbers as text: Lua's cjson would turn a millisecond time into a float.
        tx.zadd(keys.retry, next.retryAt, JSON.stringify({ event: f.event, attempt: String(attemptNo + 1), first: String(first) }));
        logger?.debug({ webhook_id: event.id, attempt: attemptNo, error: result.error }, 'webhook delivery failed; retry scheduled');
      }
    }
    await tx.xack(keys.stream, GROUP, entryId).xdel(keys.stream, entryId).exec();
  }

  private run(entries: StreamEntry[]): void {
    for (const [entryId, raw] of entries) {
      this.inFlight.start();
      this.handle(entryId, raw)
        // Left pending: it is taken over after reclaimIdleMs (by this instance too).
        .catch((err) => this.warnSometimes(err, 'recording a delivery'))
        .finally(() => {
          this.inFlight.end();
          this.wake?.();
        });
    }
  }

  private async ensureGroup(): Promise<void> {
    try {
      await this.redis.xgroup('CREATE', this.keys.stream, GROUP, '0', 'MKSTREAM');
    } catch (err) {
      if (!String((err as Error).message).includes('BUSYGROUP')) throw err;
    }
  }

  private async readLoop(): Promise<void> {
    let groupReady = false;
    while (this.running) {
      const free = this.settings.concurrency - this.inFlight.count;
      if (free <= 0) {
        await new Promise<void>((r) => (this.wake = r));
        this.wake = undefined;
        continue;
      }
      try {
        if (!groupReady) {
          await this.ensureGroup();
          groupReady = true;
        }
        const answer = (await this.blocking.xreadgroup('GROUP', GROUP, this.consumer, 'COUNT', free, 'BLOCK', Math.max(100, this.settings.pollMs), 'STREAMS', this.keys.stream, '>')) as Array<[string, StreamEntry[]]> | null;
        if (this.running && answer) this.run(answer[0]![1]);
      } catch (err) {
        if (!this.running) return;
        if (String((err as Error).message).includes('NOGROUP')) groupReady = false;
        this.warnSometimes(err, 'reading the queue');
        await new Promise((r) => setTimeout(r, 1000));
      }
    }
  }

  /** Takes over deliveries left pending too long by an instance that died. */
  private async reclaim(): Promise<void> {
    const free = this.settings.concurrency - this.inFlight.count;
    if (free <= 0) return;
    const [, entries] = (await this.redis.xautoclaim(this.keys.stream, GROUP, this.consumer, this.settings.reclaimIdleMs, '0-0', 'COUNT', free)) as [string, StreamEntry[]];
    this.run(entries.filter((e) => e && e[1]));
  }

  private every(ms: number, work: () => Promise<unknown>): void {
    let busy = false;
    const timer = setInterval(() => {
      if (busy || !this.running) return;
      busy = true;
      work().catch((err) => this.warnSometimes(err, 'queue upkeep')).finally(() => (busy = false));
    }, ms);
    timer.unref();
    this.timers.push(timer);
  }
}
