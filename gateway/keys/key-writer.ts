import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { RedisClient } from '../redis/connect';
import { currentActor } from '../audit/actor';
import { diffRecords, type AuditAction, type FieldChange } from '../audit/audit-entry';
import type { PendingAuditEntry } from '../audit/redis-audit-append';
import { ApiError } from '../errors';
import type { AuditOutbox } from '../audit/audit-outbox';
import { LOST, retryCompareAndSet } from './cas-retry';
import type { KeyEntry } from './key-entry';
import { unknownId } from './key-input';
import { newEpoch } from './key-store-epoch';
import { envelopeJson, readEnvelope, type RecordEnvelope } from './record-envelope';
import type { createRecordWrites } from './record-writes';
import { liveHashes, redisKeys, type StoredKey } from './redis-layout';

const nowIso = (): string => new Date().toISOString();

/** A committed change: the record before and after (after undefined: deleted) and what the audit entry says changed. */
export interface Change {
  readonly before?: StoredKey;
  readonly after?: StoredKey;
  readonly changes: Record<string, FieldChange>;
  /** The change asked for was already so: nothing was written, audited or announced (`after` is `before`). */
  readonly unchanged?: true;
}

/** How the key admin writes records: each change committed with its audit entry, then announced. */
export interface KeyWriter {
  /**
   * Read, change, compare-and-set (retried when another writer got there first). `change` returns
   * the record it was given (the same object) to say there is nothing to do: then nothing is
   * written, audited or announced, and the answer is `unchanged`.
   */
  update(id: string, action: AuditAction, change: (s: StoredKey) => StoredKey): Promise<Change & { before: StoredKey; after: StoredKey }>;
  /** Writes a whole record (new, or replacing one when `allowReplace`); the hash may not be another key's. */
  insert(entry: KeyEntry, allowReplace: boolean): Promise<Change & { after: StoredKey }>;
  /** Removes the record after `check` accepted it (it throws to refuse). */
  remove(id: string, check: (s: StoredKey) => void): Promise<Change & { before: StoredKey }>;
}

/**
 * What the audit entry of a whole record written over another says changed: the visible fields,
 * and a new key value as `key_value: rotated` (never a hash), as a keys-file reload records it.
 */
export function auditChanges(before: StoredKey | undefined, after: StoredKey | undefined): Record<string, FieldChange> {
  const changes = diffRecords(before, after);
  if (before && after && before.key_sha256 !== after.key_sha256) changes.key_value = { before: 'previous value', after: 'rotated' };
  return changes;
}

/**
 * A whole record from an entry, as written: a keys file's rotation becomes the store's form (its
 * end in ms, kept after it passed, as the store keeps it), and the store's times are the entry's
 * (an export restored exactly), else `existing`'s creation time and now.
 */
function recordOf(entry: KeyEntry, existing: StoredKey | undefined): StoredKey {
  const now = nowIso();
  const { previous_key_expires_at: previousEnd, previous_key_sha256: previousHash, created_at: created, updated_at: updated, ...current } = entry;
  return {
    ...current,
    ...(previousHash !== undefined && previousEnd !== undefined ? { previous_key_sha256: previousHash, previous_expires_at: Date.parse(previousEnd) } : {}),
    created_at: created ?? existing?.created_at ?? now,
    updated_at: updated ?? now,
  };
}

/** An update's plan: what `change` makes of the record, or `unchanged` when it returns the record itself. */
function planUpdate(id: string, before: StoredKey | undefined, change: (s: StoredKey) => StoredKey): Change {
  if (!before) throw unknownId(id);
  const changed = change(before);
  if (changed === before) return { before, after: before, changes: {}, unchanged: true };
  const after = { ...changed, updated_at: nowIso() };
  return { before, after, changes: diffRecords(before, after) };
}

/**
 * Every change is one compare-and-set of the record's value, which holds the record and the change's
 * audit entry (gateway/audit/audit-outbox.ts): the change and its entry are one atomic step on the record's slot,
 * on every topology. Hash pointers are written around it in a safe order (record-writes.ts). Each
 * change carries an op id: a writer whose compare-and-set ran but whose answer was lost (a cut
 * connection; the client may re-send it, and the re-sent one then finds the value changed) reads
 * its own op back and takes the change as done, so it is neither applied nor audited twice. Then
 * the entry is moved to the log and the hashes involved are announced, so every gateway drops
 * them from its cache at once. The actor is the one the channel set with `runAs` (audit/actor.ts).
 */
export function createKeyWriter(redis: RedisClient, writes: ReturnType<typeof createRecordWrites>, outbox: AuditOutbox, logger?: Logger) {
  /** After the commit: neither failure undoes the change (a retried roll would hand out a second value), so each is logged. */
  async function afterCommit(id: string, hashes: string[]): Promise<void> {
    await outbox.drain(redisKeys.record(id)).catch((err: unknown) => logger?.warn({ err: (err as Error).message, key_id: id }, 'key change and its audit entry stored; the entry reaches the log at the next read'));
    try {
      await redis.publish(redisKeys.changes, JSON.stringify({ hashes: [...new Set(hashes)] }));
    } catch (err) {
      logger?.warn({ err: (err as Error).message }, 'key change stored but not announced; gateways see it when their cache expires');
    }
  }

  /** The value now, when the compare-and-set failed or its answer was lost: did our op land? */
  const landed = async (id: string, op: string): Promise<boolean> => readEnvelope(await redis.get(redisKeys.record(id))).op === op;

  /** One change: `plan` says what to write from the value read; retried on a lost race; recognises its own re-sent write. */
  async function write(id: string, action: AuditAction, plan: (envelope: RecordEnvelope) => Change): Promise<Change> {
    const op = randomUUID();
    const actor = currentActor();
    let attempt: Change | undefined;
    let ours = false;
    const done = await retryCompareAndSet(async () => {
      const envelope = readEnvelope(await redis.get(redisKeys.record(id)));
      if (attempt && envelope.op === op) return (ours = true), attempt;
      const next = plan(envelope);
      if (next.unchanged) return next;
      attempt = next;
      const visible = Object.keys(next.changes).length > 0 || action === 'roll';
      const entry: PendingAuditEntry = { op, actor: actor.name, channel: actor.channel, action, key_id: id, changes: next.changes };
      const pending = visible ? [...envelope.pending, entry] : envelope.pending;
      if (pending.length) await outbox.note(redisKeys.record(id));
      const json = envelopeJson(next.after, pending, op);
      try {
        const committed = next.after
          ? await writes.commit({ ...(next.before ? { stored: next.before } : {}), json: envelope.json }, next.after, json!)
          : await writes.remove({ stored: next.before!, json: envelope.json! }, json);
        return committed ? next : LOST;
      } catch (err) {
        if (await landed(id, op).catch(() => false)) return (ours = true), next;
        throw err;
      }
    });
    // Found committed by a re-sent command: the pointers' tidying after it was not run.
    if (ours) await (done.after ? writes.tidy(done.before, done.after) : writes.tidyRemoved(done.before!));
    return done;
  }

  return {
    async update(id, action, change) {
      const done = await write(id, action, ({ stored }) => planUpdate(id, stored, change));
      if (done.unchanged) return done as Change & { before: StoredKey; after: StoredKey };
      await afterCommit(id, [...liveHashes(done.before!, 0), ...liveHashes(done.after!, 0)]);
      return done as Change & { before: StoredKey; after: StoredKey };
    },
    async insert(entry, allowReplace) {
      const done = await write(entry.id, allowReplace ? 'import' : 'create', ({ stored: existing }) => {
        if (existing && !allowReplace) throw new ApiError('invalid_parameter', { parameter: 'id' }, undefined, `A key with id "${entry.id}" already exists.`);
        const after = recordOf(entry, existing);
        return { ...(existing ? { before: existing } : {}), after, changes: auditChanges(existing, after) };
      });
      // The key-store marker: its absence later tells a lost store from one that never held keys.
      await redis.set(redisKeys.epoch, newEpoch(), 'NX');
      await afterCommit(entry.id, [entry.key_sha256, ...(done.before ? liveHashes(done.before, 0) : [])]);
      return done as Change & { after: StoredKey };
    },
    async remove(id, check) {
      const done = await write(id, 'delete', ({ stored }) => {
        if (!stored) throw unknownId(id);
        check(stored);
        return { before: stored, changes: auditChanges(stored, undefined) };
      });
      await afterCommit(id, liveHashes(done.before!, 0));
      return done as Change & { before: StoredKey };
    },
  } satisfies KeyWriter;
}
