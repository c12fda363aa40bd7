import type { Logger } from 'pino';
import type { RedisClient } from '../redis/connect';
import { currentActor } from '../audit/actor';
import { diffRecords, type AuditAction } from '../audit/audit-entry';
import type { RedisAuditLog } from '../audit/redis-audit-log';
import { ApiError } from '../errors';
import { LOST, retryCompareAndSet } from './cas-retry';
import type { KeyEntry } from './key-entry';
import { unknownId } from './key-input';
import { newEpoch } from './key-store-epoch';
import { createRecordWrites } from './record-writes';
import { liveHashes, parseStoredKey, redisKeys, type StoredKey } from './redis-layout';

const nowIso = (): string => new Date().toISOString();

/** How the key admin writes records: each change committed, audited and announced. */
export interface KeyWriter {
  /** Read, change, compare-and-set (retried when another writer got there first). Returns what was written. */
  update(id: string, action: AuditAction, change: (s: StoredKey) => StoredKey): Promise<StoredKey>;
  /** Writes a whole record (new, or replacing one when `allowReplace`); the hash may not be another key's. */
  insert(entry: KeyEntry, allowReplace: boolean): Promise<{ done: 'created' | 'replaced'; stored: StoredKey }>;
  /** Removes the record after `check` accepted it (it throws to refuse). Returns what was removed. */
  remove(id: string, check: (s: StoredKey) => void): Promise<StoredKey>;
}

/**
 * Every change is a compare-and-set of the record with its hash pointers written around it in a
 * safe order (record-writes.ts says why no transaction is needed: on a Redis Cluster the record,
 * its pointers and the audit log live in different slots), then its audit entry, then a change
 * message naming the hashes involved, so every gateway drops them from its cache at once. The actor
 * is the one the channel set with `runAs` (gateway/audit/actor.ts).
 */
export function createKeyWriter(redis: RedisClient, audit: RedisAuditLog, logger?: Logger): KeyWriter {
  const writes = createRecordWrites(redis);
  /**
   * Appends the audit entry of a committed change (a change that changes nothing visible is not
   * one). After the commit, not in one transaction with it: on a cluster the log is in another slot.
   * So the entry is written at most once: a writer that dies, or a Redis that fails, between the
   * commit and this loses the entry, which is logged as an error (never reported as a failed change:
   * a retried roll would hand out a second value).
   */
  const audited = async (action: AuditAction, id: string, before: StoredKey | undefined, after: StoredKey | undefined): Promise<void> => {
    const changes = diffRecords(before, after);
    if (!Object.keys(changes).length && action !== 'roll') return;
    try {
      const tx = redis.pipeline(); // both commands on the log's one key: one slot
      audit.append(tx, currentActor(), action, id, changes);
      await tx.exec();
    } catch (err) {
      logger?.error({ err: (err as Error).message, key_id: id, action }, 'key change stored but not written to the audit log');
    }
  };
  /**
   * Tells every gateway which hashes changed. It runs after the change is committed: a failure here
   * does not undo it (the gateways' cache TTL is the safety net), so it is logged, not reported as a
   * failed change (a retried roll would otherwise hand out a second value).
   */
  const publish = async (hashes: string[]): Promise<void> => {
    try {
      await redis.publish(redisKeys.changes, JSON.stringify({ hashes }));
    } catch (err) {
      logger?.warn({ err: (err as Error).message }, 'key change stored but not announced; gateways see it when their cache expires');
    }
  };

  return {
    async update(id, action, change) {
      const { before, after } = await retryCompareAndSet(async () => {
        const json = await redis.get(redisKeys.record(id));
        const before = parseStoredKey(json);
        if (!before) throw unknownId(id);
        const after = { ...change(before), updated_at: nowIso() };
        return (await writes.commit({ stored: before, json }, after)) ? { before, after } : LOST;
      });
      await audited(action, id, before, after);
      await publish([...new Set([...liveHashes(before, 0), ...liveHashes(after, 0)])]);
      return after;
    },
    async insert(entry, allowReplace) {
      const { existing, stored } = await retryCompareAndSet(async () => {
        const json = await redis.get(redisKeys.record(entry.id));
        const existing = parseStoredKey(json);
        if (existing && !allowReplace) throw new ApiError('invalid_parameter', { parameter: 'id' }, undefined, `A key with id "${entry.id}" already exists.`);
        const now = nowIso();
        // A keys-file rotation (previous hash and its end as a date) becomes the store's form.
        const { previous_key_expires_at: previousEnd, previous_key_sha256: previousHash, ...current } = entry;
        const previousUntil = previousEnd !== undefined ? Date.parse(previousEnd) : undefined;
        const rotating = previousHash !== undefined && previousUntil !== undefined && previousUntil > Date.now();
        const stored: StoredKey = {
          ...current,
          ...(rotating ? { previous_key_sha256: previousHash, previous_expires_at: previousUntil } : {}),
          created_at: existing?.created_at ?? now,
          updated_at: now,
        };
        return (await writes.commit({ ...(existing ? { stored: existing } : {}), json }, stored)) ? { existing, stored } : LOST;
      });
      // The key-store marker: its absence later tells a lost store from one that never held keys.
      await redis.set(redisKeys.epoch, newEpoch(), 'NX');
      await audited(allowReplace ? 'import' : 'create', entry.id, existing, stored);
      await publish([entry.key_sha256, ...(existing ? liveHashes(existing, 0) : [])]);
      return { done: existing ? 'replaced' : 'created', stored };
    },
    async remove(id, check) {
      const stored = await retryCompareAndSet(async () => {
        const json = await redis.get(redisKeys.record(id));
        const stored = parseStoredKey(json);
        if (!stored) throw unknownId(id);
        check(stored);
        return (await writes.remove({ stored, json: json! })) ? stored : LOST;
      });
      await audited('delete', id, stored, undefined);
      await publish(liveHashes(stored, 0));
      return stored;
    },
  };
}
