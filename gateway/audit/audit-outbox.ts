import type { Logger } from 'pino';
import type { RedisClient } from '../redis/connect';
import { compareAndSet } from '../redis/compare-and-set';
import { LOST, untilSet } from './cas-loop';
import { outboxJson, readOutboxValue } from './outbox-value';
import type { PendingAuditEntry } from './redis-audit-append';

/** Records drained per read of the log, at most (normally none is pending: only a writer cut off leaves one). */
const SWEEP_LIMIT = 100;

export interface AuditOutbox {
  /** Notes that the record at Redis key `record` is about to hold pending entries (before the compare-and-set writing them). */
  note(record: string): Promise<void>;
  /** Moves the pending entries of the record at `record` to the log, each exactly once, and takes them out of the record. */
  drain(record: string): Promise<void>;
  /** Drains the records noted as pending (at most SWEEP_LIMIT): run before the log is read. */
  sweep(): Promise<void>;
}

export interface AuditOutboxOptions {
  /** The set of the Redis keys of records that may hold pending entries. */
  readonly pendingSet: string;
  /** The record key of a member of the set (members written before the set held record keys). */
  readonly recordOf?: (member: string) => string;
  readonly logger?: Logger | undefined;
}

/**
 * The audit log's outbox, for every record the admin changes: keys, accounts, subscription
 * requests. A change writes its audit entry into the record's own value, in the same
 * compare-and-set as the change (outbox-value.ts): both happen or neither, on one node or a
 * cluster, whatever the connection does. The entry then moves to the log (the stream, in another
 * slot) by `drain`, which writes it once by its op (redis-audit-append.ts) and only then takes it
 * out of the record: a drain cut at any step is simply run again, by the writer, the next change of
 * the record, or the next read of the log (`sweep`, through the set of noted records).
 */
export function createAuditOutbox(redis: RedisClient, append: (entry: PendingAuditEntry) => Promise<unknown>, options: AuditOutboxOptions): AuditOutbox {
  const { pendingSet, recordOf = (member: string) => member, logger } = options;
  async function drainRecord(record: string, member: string): Promise<void> {
    await untilSet(async () => {
      const value = readOutboxValue(await redis.get(record));
      if (!value.pending.length) return true;
      for (const entry of value.pending) await append(entry);
      return (await compareAndSet(redis, record, value.json, outboxJson(value.body, [], value.op))) ? true : LOST;
    }, () => new Error('the record kept changing while its audit entries were moved to the log'));
    await redis.srem(pendingSet, member);
    // A change that noted the record between the drain and the SREM above is noted again.
    if (readOutboxValue(await redis.get(record)).pending.length) await redis.sadd(pendingSet, record);
  }
  return {
    note: async (record) => {
      await redis.sadd(pendingSet, record);
    },
    drain: (record) => drainRecord(record, record),
    async sweep() {
      const members = await redis.srandmember(pendingSet, SWEEP_LIMIT);
      for (const member of members) {
        await drainRecord(recordOf(member), member).catch((err: unknown) => logger?.warn({ err: (err as Error).message, record: recordOf(member) }, 'audit entries not yet moved to the log; retried at the next read'));
      }
    },
  };
}
