import type { RedisClient } from '../redis/connect';
import type { Channel } from './actor';
import type { AuditAction, FieldChange } from './audit-entry';
import { streamFor, type AuditRetention } from './redis-audit-log';

/**
 * An audit entry written with its change, before it reaches the log: `op` names the change once
 * and for all, so writing it to the log twice (a retried drain, a command the client re-sent after
 * a reconnect) still makes one entry.
 */
export interface PendingAuditEntry {
  readonly op: string;
  readonly actor: string;
  readonly channel: Channel;
  readonly action: AuditAction;
  readonly key_id: string;
  /** The account an account or request entry is about. */
  readonly account_id?: string;
  readonly changes: Record<string, FieldChange>;
}

/**
 * Adds the entry unless its op is already in the log, in one step on the stream's slot. KEYS: the
 * stream, the set of ops written (its name carries the stream's name as hash tag: same slot on a
 * cluster). ARGV: op, MAXLEN, MINID, how long ops are remembered (ms), then the entry's fields.
 */
const APPEND_ONCE = `
if redis.call('ZSCORE', KEYS[2], ARGV[1]) then return 0 end
redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[2], '*', unpack(ARGV, 5))
redis.call('XTRIM', KEYS[1], 'MINID', '~', ARGV[3])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZADD', KEYS[2], now, ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now - tonumber(ARGV[4]))
return 1
`;

/** An op is remembered this long: a pending entry is drained long before (at its change, or the next read of the log). */
const REMEMBER_OPS_MS = 7 * 86_400_000;

/** The set of ops already in the log `streamKey`: same hash slot as the stream. */
export const writtenOpsKey = (streamKey: string): string => `{${streamKey}}:ops`;

/**
 * Writes pending entries to the audit stream exactly once each (see APPEND_ONCE): a holder's
 * (channel `portal`) to the holders' stream, capped on its own (redis-audit-log.ts). The entry's time
 * is the stream id's (Redis's clock), as for every entry. Returns true when this call wrote it.
 */
export function createAuditAppender(redis: RedisClient, streamKey: string, retention: AuditRetention) {
  return async (entry: PendingAuditEntry): Promise<boolean> => {
    const minId = String(Date.now() - retention.days * 86_400_000);
    const fields = ['actor', entry.actor, 'channel', entry.channel, 'action', entry.action, 'key_id', entry.key_id, 'changes', JSON.stringify(entry.changes),
      ...(entry.account_id !== undefined ? ['account_id', entry.account_id] : []), 'op', entry.op];
    const written = await redis.eval(APPEND_ONCE, 2, streamFor(streamKey, entry.channel), writtenOpsKey(streamKey), entry.op, String(retention.maxEntries), minId, String(REMEMBER_OPS_MS), ...fields);
    return written === 1;
  };
}
