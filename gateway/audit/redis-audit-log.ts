import type { RedisClient } from '../redis/connect';
import type { ChainableCommander } from 'ioredis';
import type { Actor, Channel } from './actor';
import type { AuditAction, AuditEntry, FieldChange } from './audit-entry';
import { decodeCursor, encodeCursor, type AuditLog, type AuditPage, type AuditQuery } from './audit-log';

/** How much of the log Redis keeps: whichever bound is reached first trims the oldest entries. */
export interface AuditRetention {
  maxEntries: number;
  days: number;
}

export const DEFAULT_AUDIT_RETENTION: AuditRetention = { maxEntries: 1_000_000, days: 400 };

/**
 * A key-id filter reads the stream newest first in batches; one page reads at most this many
 * entries, so a filter on a rare key costs a bounded time. A page may then hold fewer than `limit`
 * entries while `next_cursor` says there is more to look through.
 */
const SCAN_BUDGET = 20_000;
const BATCH = 1_000;
/** A stream id Redis accepts as an exclusive end: each part below 2^64 (19 digits at most), never 0-0. */
const STREAM_ID = /^(?!0-0$)(0|[1-9]\d{0,18})-(0|[1-9]\d{0,18})$/;

export interface RedisAuditLog extends AuditLog {
  /** Adds the entry to `tx`, the transaction of the change itself: both happen, or neither. */
  append(tx: ChainableCommander, actor: Actor, action: AuditAction, keyId: string, changes: Record<string, FieldChange>, accountId?: string): void;
}

function parse(id: string, flat: string[]): AuditEntry {
  const f: Record<string, string> = {};
  for (let i = 0; i + 1 < flat.length; i += 2) f[flat[i]!] = flat[i + 1]!;
  let changes: Record<string, FieldChange> = {};
  try {
    changes = JSON.parse(f.changes ?? '{}') as Record<string, FieldChange>;
  } catch { /* a foreign entry: shown with no changes rather than failing the page */ }
  return {
    id,
    time: new Date(Number(id.split('-')[0])).toISOString(),
    actor: f.actor ?? '',
    channel: (f.channel ?? 'library') as Channel,
    action: (f.action ?? 'change') as AuditAction,
    key_id: f.key_id ?? '',
    ...(f.account_id !== undefined ? { account_id: f.account_id } : {}),
    changes,
  };
}

/**
 * The audit log of the Redis key store: a Redis stream, capped by entry count (XADD MAXLEN ~) and
 * by age (XTRIM MINID ~), both approximate so trimming stays O(1) per write. The entry's time is
 * the stream id's (Redis's clock), so every writer (CLI, each gateway) orders on one clock.
 */
export function createRedisAuditLog(redis: RedisClient, streamKey: string, retention: AuditRetention = DEFAULT_AUDIT_RETENTION): RedisAuditLog {
  return {
    append(tx, actor, action, keyId, changes, accountId) {
      tx.xadd(streamKey, 'MAXLEN', '~', String(retention.maxEntries), '*',
        'actor', actor.name, 'channel', actor.channel, 'action', action, 'key_id', keyId, 'changes', JSON.stringify(changes),
        ...(accountId !== undefined ? ['account_id', accountId] : []));
      tx.xtrim(streamKey, 'MINID', '~', String(Date.now() - retention.days * 86_400_000));
    },
    async read(query: AuditQuery): Promise<AuditPage> {
      let end = query.cursor ? `(${decodeCursor(query.cursor, STREAM_ID)}` : '+';
      const start = query.sinceMs !== undefined ? String(query.sinceMs) : '-';
      const entries: AuditEntry[] = [];
      let scanned = 0;
      let lastId: string | undefined;
      let exhausted = false;
      while (entries.length < query.limit && scanned < SCAN_BUDGET) {
        const count = query.keyId ? BATCH : query.limit - entries.length;
        const batch = await redis.xrevrange(streamKey, end, start, 'COUNT', count);
        let consumed = 0;
        for (const [id, fields] of batch) {
          consumed++;
          scanned++;
          lastId = id;
          const entry = parse(id, fields);
          if (query.keyId === undefined || entry.key_id === query.keyId) entries.push(entry);
          if (entries.length === query.limit) break;
        }
        if (batch.length < count && consumed === batch.length) {
          exhausted = true;
          break;
        }
        end = `(${lastId!}`;
      }
      return { entries, next_cursor: exhausted || lastId === undefined ? null : encodeCursor(lastId) };
    },
  };
}
