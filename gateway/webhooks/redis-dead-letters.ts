import type { RedisClient as Redis } from '../redis/connect';
import { deadLetterCursor, deadLetterLimit, deadLetterSortKey, decodeDeadLetterCursor, type DeadLetterPage } from './dead-letter-page';
import type { DeadLetter } from './dead-letter';
import type { DeadLetterBounds } from './webhook-queue';
import type { WebhookEvent } from './webhook-event';

/** The dead letters' Redis keys (in the queue's hash slot, so scripts run unchanged on a cluster). */
export const deadLetterKeys = {
  /** id → dead letter (JSON). */
  letters: 'lgw:{webhooks}:dead',
  /** The order of the letters: a sorted set, every score 0, members `failed_at NUL id` (read by lex range). */
  index: 'lgw:{webhooks}:dead:index',
} as const;

/** A dead letter as stored (the event kept as its queued JSON text). */
export interface StoredDead {
  event: string;
  attempts: number;
  last_error: string;
  failed_at: string;
}

/** Letters removed per bound per call at most: a script never runs long, whatever was left behind. */
const TRIM_BATCH = 1000;

/**
 * Keeps a dead letter (KEYS[1] letters, KEYS[2] index; ARGV: id, JSON, index member, the count bound,
 * the oldest member kept), then trims: letters that failed before the age bound, then the oldest
 * beyond the count bound. Atomic: the hash and the index never disagree.
 */
export const BURY = `
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('ZADD', KEYS[2], 0, ARGV[3])
local function drop(members)
  for _, m in ipairs(members) do
    local at = string.find(m, '\\0', 1, true)
    if at then redis.call('HDEL', KEYS[1], string.sub(m, at + 1)) end
    redis.call('ZREM', KEYS[2], m)
  end
end
drop(redis.call('ZRANGEBYLEX', KEYS[2], '-', '(' .. ARGV[5], 'LIMIT', 0, ${TRIM_BATCH}))
local over = redis.call('ZCARD', KEYS[2]) - tonumber(ARGV[4])
if over > 0 then drop(redis.call('ZRANGE', KEYS[2], 0, math.min(over, ${TRIM_BATCH}) - 1)) end
return 1
`;

/** A dead letter back into the stream (at most once, however many operators click); KEYS: stream, letters, index. */
const RESEND = `
local v = redis.call('HGET', KEYS[2], ARGV[1])
if not v then return 0 end
local d = cjson.decode(v)
redis.call('HDEL', KEYS[2], ARGV[1])
redis.call('ZREM', KEYS[3], d.failed_at .. '\\0' .. ARGV[1])
redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[3], '*', 'event', d.event, 'attempt', '1', 'first', ARGV[2])
return 1
`;

/** The arguments of BURY for a letter now, under `bounds`. */
export function buryArgs(id: string, dead: StoredDead, bounds: DeadLetterBounds, nowMs: number): Array<string | number> {
  const oldestKept = deadLetterSortKey(new Date(nowMs - bounds.maxAgeMs).toISOString(), '');
  return [id, JSON.stringify(dead), deadLetterSortKey(dead.failed_at, id), bounds.maxCount, oldestKept];
}

const letterOf = (id: string, json: string): DeadLetter => {
  const d = JSON.parse(json) as StoredDead;
  const e = JSON.parse(d.event) as WebhookEvent;
  return { id, type: e.type, attempts: d.attempts, last_error: d.last_error, failed_at: d.failed_at, event: { type: e.type, timestamp: e.timestamp, data: e.data } };
};

/**
 * The dead letters in Redis: paged and re-sent by the admin API and the CLI, which do not deliver.
 * A page is one lex range of the index (`limit` + 1 members) and one HMGET of those letters:
 * its cost does not depend on how many letters are kept.
 */
export function createRedisDeadLetters(redis: Redis, streamKey: string, streamMaxLen: number) {
  return {
    async deadLetterPage(query: { limit?: number; cursor?: string }): Promise<DeadLetterPage> {
      const limit = deadLetterLimit(query.limit);
      const from = query.cursor === undefined ? '-' : `(${decodeDeadLetterCursor(query.cursor)}`;
      const members = await redis.zrangebylex(deadLetterKeys.index, from, '+', 'LIMIT', 0, limit + 1);
      const ids = members.slice(0, limit).map((m) => m.slice(m.indexOf('\u0000') + 1));
      const texts = ids.length ? await redis.hmget(deadLetterKeys.letters, ...ids) : [];
      // A letter re-sent between the two reads is gone: it is left out, not shown empty.
      const events = ids.flatMap((id, i) => (texts[i] ? [letterOf(id, texts[i])] : []));
      const last = ids.length ? { id: ids[ids.length - 1]!, failed_at: members[ids.length - 1]!.slice(0, members[ids.length - 1]!.indexOf('\u0000')) } : undefined;
      return { events, next_cursor: members.length > limit && last ? deadLetterCursor(last) : null };
    },
    async resend(id: string): Promise<boolean> {
      return (await redis.eval(RESEND, 3, streamKey, deadLetterKeys.letters, deadLetterKeys.index, id, Date.now(), streamMaxLen)) === 1;
    },
    /**
     * Letters kept before the index existed (an older gateway): indexed by HSCAN, a batch at a
     * time, off any request. Returns how many were indexed.
     */
    async indexUnindexed(): Promise<number> {
      const [letters, indexed] = await Promise.all([redis.hlen(deadLetterKeys.letters), redis.zcard(deadLetterKeys.index)]);
      if (letters <= indexed) return 0;
      let cursor = '0';
      let added = 0;
      do {
        const [next, flat] = await redis.hscan(deadLetterKeys.letters, cursor, 'COUNT', 500);
        const members: Array<string | number> = [];
        for (let i = 0; i + 1 < flat.length; i += 2) members.push(0, deadLetterSortKey((JSON.parse(flat[i + 1]!) as StoredDead).failed_at, flat[i]!));
        if (members.length) added += await redis.zadd(deadLetterKeys.index, 'NX', ...members);
        cursor = next;
      } while (cursor !== '0');
      return added;
    },
  };
}
