import type { Logger } from 'pino';
import type { PendingAuditEntry } from '../audit/redis-audit-append';
import type { RedisClient } from '../redis/connect';
import { LOST, retryCompareAndSet } from './cas-retry';
import { envelopeJson, readEnvelope } from './record-envelope';
import type { createRecordWrites } from './record-writes';
import { redisKeys } from './redis-layout';

/** Records drained per read of the log, at most (normally none is pending: only a writer cut off leaves one). */
const SWEEP_LIMIT = 100;

export interface AuditOutbox {
  /** Notes that `id`'s record is about to hold pending entries (before the compare-and-set writing them). */
  note(id: string): Promise<void>;
  /** Moves `id`'s pending entries to the log, each exactly once, and takes them out of the record. */
  drain(id: string): Promise<void>;
  /** Drains the records noted as pending (at most SWEEP_LIMIT): run before the log is read. */
  sweep(): Promise<void>;
}

/**
 * The audit log's outbox. A change writes its audit entry into the record's own value, in the same
 * compare-and-set as the change (record-envelope.ts): both happen or neither, on one node or a
 * cluster, whatever the connection does. The entry then moves to the log (the stream, in another
 * slot) by `drain`, which writes it once by its op (redis-audit-append.ts) and only then takes it
 * out of the record: a drain cut at any step is simply run again, by the writer, the next change of
 * the key, or the next read of the log (`sweep`, through the set of noted ids).
 */
export function createAuditOutbox(
  redis: RedisClient,
  append: (entry: PendingAuditEntry) => Promise<unknown>,
  writes: ReturnType<typeof createRecordWrites>,
  logger?: Logger,
): AuditOutbox {
  async function drain(id: string): Promise<void> {
    await retryCompareAndSet(async () => {
      const envelope = readEnvelope(await redis.get(redisKeys.record(id)));
      if (!envelope.pending.length) return true;
      for (const entry of envelope.pending) await append(entry);
      return (await writes.replaceValue(id, envelope.json!, envelopeJson(envelope.stored, [], envelope.op))) ? true : LOST;
    });
    await redis.srem(redisKeys.auditPending, id);
    // A change that noted the id between the drain and the SREM above is noted again.
    if (readEnvelope(await redis.get(redisKeys.record(id))).pending.length) await redis.sadd(redisKeys.auditPending, id);
  }
  return {
    note: async (id) => {
      await redis.sadd(redisKeys.auditPending, id);
    },
    drain,
    async sweep() {
      const ids = await redis.srandmember(redisKeys.auditPending, SWEEP_LIMIT);
      for (const id of ids) {
        await drain(id).catch((err: unknown) => logger?.warn({ err: (err as Error).message, key_id: id }, 'audit entries not yet moved to the log; retried at the next read'));
      }
    },
  };
}
