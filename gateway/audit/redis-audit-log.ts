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
/**
 * A cursor's position: a stream id Redis accepts as an exclusive end (each part below 2^64, never
 * 0-0), with `p` when the last entry shown was a holder's (from the holders' stream).
 */
const POSITION = /^(?!0-0p?$)(0|[1-9]\d{0,18})-(0|[1-9]\d{0,18})p?$/;

/**
 * Holders' entries (channel `portal`) have a stream of their own beside the operators', each capped
 * by its own count, so a holder's changes can only push out holders' entries, never an operator's.
 * Same hash slot as the operators' stream (its name is the hash tag): one script writes either.
 */
export const holderStreamOf = (streamKey: string): string => `{${streamKey}}:portal`;
export const streamFor = (streamKey: string, channel: Channel): string => (channel === 'portal' ? holderStreamOf(streamKey) : streamKey);

type StreamEntry = [id: string, fields: string[]];
/** One stream read newest first in batches, from `end` down to `start`. */
interface Source {
  readonly stream: string;
  readonly holders: boolean;
  end: string;
  buffer: StreamEntry[];
  done: boolean;
}

/** Newer first; on equal ids (two streams, one clock) the operators' entry comes first. */
function newer(a: StreamEntry, b: StreamEntry): boolean {
  const [am, as] = a[0].split('-').map(BigInt) as [bigint, bigint];
  const [bm, bs] = b[0].split('-').map(BigInt) as [bigint, bigint];
  return am !== bm ? am > bm : as >= bs;
}

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
 * The audit log of the Redis key store: two Redis streams (operators' and holders', read as one
 * newest first), each capped by entry count (XADD MAXLEN ~) and by age (XTRIM MINID ~), both
 * approximate so trimming stays O(1) per write. The entry's time is the stream id's (Redis's
 * clock), so every writer (CLI, each gateway) orders on one clock, and the two streams merge.
 */
export function createRedisAuditLog(redis: RedisClient, streamKey: string, retention: AuditRetention = DEFAULT_AUDIT_RETENTION): RedisAuditLog {
  return {
    append(tx, actor, action, keyId, changes, accountId) {
      tx.xadd(streamFor(streamKey, actor.channel), 'MAXLEN', '~', String(retention.maxEntries), '*',
        'actor', actor.name, 'channel', actor.channel, 'action', action, 'key_id', keyId, 'changes', JSON.stringify(changes),
        ...(accountId !== undefined ? ['account_id', accountId] : []));
      tx.xtrim(streamFor(streamKey, actor.channel), 'MINID', '~', String(Date.now() - retention.days * 86_400_000));
    },
    async read(query: AuditQuery): Promise<AuditPage> {
      const position = query.cursor ? decodeCursor(query.cursor, POSITION) : undefined;
      const at = position?.replace(/p$/, '');
      const start = query.sinceMs !== undefined ? String(query.sinceMs) : '-';
      const sources: Source[] = [
        { stream: streamKey, holders: false, end: at ? `(${at}` : '+', buffer: [], done: false },
        // After an operator's entry, a holder's with the same id is still to come (it sorts after).
        { stream: holderStreamOf(streamKey), holders: true, end: at ? (position!.endsWith('p') ? `(${at}` : at) : '+', buffer: [], done: false },
      ];
      const count = query.keyId ? BATCH : query.limit;
      const peek = async (src: Source): Promise<StreamEntry | undefined> => {
        if (!src.buffer.length && !src.done) {
          src.buffer = await redis.xrevrange(src.stream, src.end, start, 'COUNT', count);
          if (src.buffer.length < count) src.done = true;
          if (src.buffer.length) src.end = `(${src.buffer[src.buffer.length - 1]![0]}`;
        }
        return src.buffer[0];
      };
      const entries: AuditEntry[] = [];
      let last: string | undefined;
      for (let scanned = 0; entries.length < query.limit && scanned < SCAN_BUDGET; scanned++) {
        const [a, b] = [await peek(sources[0]!), await peek(sources[1]!)];
        const src = a && (!b || newer(a, b)) ? sources[0]! : b ? sources[1]! : undefined;
        if (!src) break;
        const [id, fields] = src.buffer.shift()!;
        last = src.holders ? `${id}p` : id;
        const entry = parse(id, fields);
        if (query.keyId === undefined || entry.key_id === query.keyId) entries.push(entry);
      }
      const exhausted = sources.every((src) => src.done && !src.buffer.length);
      return { entries, next_cursor: exhausted || last === undefined ? null : encodeCursor(last) };
    },
  };
}
