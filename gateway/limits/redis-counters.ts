import type { RedisClient } from '../redis/connect';
import { withDeadline } from '../redis/deadline';
import type { Limits } from '../config/gateway-config';
import type { CounterReadout, Counters, LimitDecision } from './counters';
import { decide } from './decide';
import { windowsAt, type WindowBounds, type WindowName } from './windows';

/**
 * Checks the three windows and, when all have room, counts the request in all three: one atomic
 * step on the Redis server, so no interleaving of instances can overshoot a limit, each accepted
 * request is counted exactly once, and a refused one nowhere. Returns the counts before the request.
 * KEYS: minute, day, month counters. ARGV: the three limits, the three expiry times (ms), consume flag.
 */
const CONSUME_SCRIPT = `
local used = {}
for i = 1, 3 do used[i] = tonumber(redis.call('GET', KEYS[i]) or '0') end
local counted = 0
if ARGV[7] == '1' and used[1] < tonumber(ARGV[1]) and used[2] < tonumber(ARGV[2]) and used[3] < tonumber(ARGV[3]) then
  for i = 1, 3 do
    redis.call('INCR', KEYS[i])
    redis.call('PEXPIREAT', KEYS[i], ARGV[3 + i])
  end
  counted = 1
end
return {counted, used[1], used[2], used[3]}
`;

/**
 * Gives back one count in each of the three windows (KEYS: minute, day, month counters of the
 * request's instant), never below zero and never creating a counter that has expired.
 */
const REFUND_SCRIPT = `
for i = 1, 3 do
  local used = tonumber(redis.call('GET', KEYS[i]) or '0')
  if used > 0 then redis.call('DECR', KEYS[i]) end
end
return 1
`;

/** Counters are kept this long after their window ends, so `usage` can still read a just-closed window. */
const EXPIRY_SLACK_MS = 60_000;

type ConsumeCommand = (
  minute: string, day: string, month: string,
  perMinute: number, perDay: number, perMonth: number,
  minuteExpiry: number, dayExpiry: number, monthExpiry: number,
  consume: '0' | '1',
) => Promise<[number, number, number, number]>;

/**
 * Counter key names. The `{keyId}` hash tag puts a key's three counters in one Redis Cluster slot,
 * so the script runs unchanged on a cluster.
 */
export function counterKeys(keyId: string, w: Readonly<Record<WindowName, WindowBounds>>): { minute: string; day: string; month: string } {
  return {
    minute: `lgw:{${keyId}}:minute:${w.minute.start}`,
    day: `lgw:{${keyId}}:day:${w.day.start}`,
    month: `lgw:{${keyId}}:month:${w.month.start}`,
  };
}

/**
 * Limit counters shared by every gateway instance, in Redis. One round trip per request (a Lua
 * script defined once with `defineCommand`, run by its SHA). Windows come from the gateway's clock,
 * which instances share through NTP. Throws when Redis fails: the resilient wrapper decides. With
 * `deadlineMs`, no call waits longer than that, whatever the client does meanwhile (deadline.ts).
 */
export function createRedisCounters(redis: RedisClient, options: { deadlineMs?: number } = {}): Counters & CounterReadout {
  redis.defineCommand('lgwConsume', { numberOfKeys: 3, lua: CONSUME_SCRIPT });
  redis.defineCommand('lgwRefund', { numberOfKeys: 3, lua: REFUND_SCRIPT });
  const run = (redis as unknown as { lgwConsume: ConsumeCommand }).lgwConsume.bind(redis);
  const giveBack = (redis as unknown as { lgwRefund: (minute: string, day: string, month: string) => Promise<number> }).lgwRefund.bind(redis);

  async function call(keyId: string, limits: Limits, nowMs: number, consume: boolean): Promise<LimitDecision> {
    const w = windowsAt(nowMs);
    const keys = counterKeys(keyId, w);
    const reply = run(
      keys.minute, keys.day, keys.month,
      limits.perMinute, limits.perDay, limits.perMonth,
      w.minute.reset + EXPIRY_SLACK_MS, w.day.reset + EXPIRY_SLACK_MS, w.month.reset + EXPIRY_SLACK_MS,
      consume ? '1' : '0',
    );
    const [counted, minute, day, month] = await (options.deadlineMs ? withDeadline(reply, options.deadlineMs) : reply);
    return decide({ minute, day, month }, limits, nowMs, counted === 1, w);
  }

  return {
    consume: (keyId, limits, nowMs = Date.now()) => call(keyId, limits, nowMs, true),
    peek: (keyId, limits, nowMs = Date.now()) => call(keyId, limits, nowMs, false),
    // A second round trip, on the failure path only: the request path stays one round trip.
    refund: async (keyId, countedAtMs) => {
      const keys = counterKeys(keyId, windowsAt(countedAtMs));
      await giveBack(keys.minute, keys.day, keys.month);
    },
    // The three counters share the key's hash tag: one MGET, one DEL, on any topology.
    used: async (keyId, nowMs = Date.now()) => {
      const keys = counterKeys(keyId, windowsAt(nowMs));
      const [minute, day, month] = (await redis.mget(keys.minute, keys.day, keys.month)).map((v) => Number(v ?? 0));
      return { minute: minute!, day: day!, month: month! };
    },
    forget: async (keyId, nowMs = Date.now()) => {
      const keys = counterKeys(keyId, windowsAt(nowMs));
      await redis.del(keys.minute, keys.day, keys.month);
    },
  };
}
