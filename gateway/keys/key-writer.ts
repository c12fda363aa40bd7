import type { Logger } from 'pino';
import type { RedisClient } from '../redis/connect';
import { diffRecords, type AuditAction, type FieldChange } from '../audit/audit-entry';
import { auditedWrite } from '../audit/audited-write';
import { ApiError } from '../errors';
import type { AuditOutbox } from '../audit/audit-outbox';
import type { KeyEntry } from './key-entry';
import { unknownId } from './key-input';
import { concurrentChange, type KeyPointers } from './key-pointers';
import { newEpoch } from './key-store-epoch';
import { liveHashes, parseStoredKey, redisKeys, type StoredKey } from './redis-layout';

const nowIso = (): string => new Date().toISOString();

/** A committed change: the record before and after (after undefined: deleted) and what the audit entry says changed. */
export interface Change {
  readonly before?: StoredKey;
  readonly after?: StoredKey;
  readonly changes: Record<string, FieldChange>;
  /** The change asked for was already so: nothing was written, audited or announced (`after` is `before`). */
  readonly unchanged?: true;
}

/** What an update may add to its change. */
export interface UpdateOptions {
  /**
   * Checked against the record as read, on every attempt, before `change` (it throws to refuse):
   * the change commits only over the very version the check accepted (the compare-and-set), so a
   * condition on the record holds at the instant of the change. What it reads elsewhere (another
   * record) is read before the write, not locked.
   */
  precondition?(before: StoredKey): void | Promise<void>;
}

/** How the key admin writes records: each change committed with its audit entry, then announced. */
export interface KeyWriter {
  /**
   * Read, change, compare-and-set (retried when another writer got there first). `change` returns
   * the record it was given (the same object) to say there is nothing to do: then nothing is
   * written, audited or announced, and the answer is `unchanged`.
   */
  update(id: string, action: AuditAction, change: (s: StoredKey) => StoredKey, options?: UpdateOptions): Promise<Change & { before: StoredKey; after: StoredKey }>;
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
 * Every change is one audited write (gateway/audit/audited-write.ts): one compare-and-set of the
 * record's value, which holds the record and the change's audit entry, retried on a lost race and
 * recognising its own re-sent write by its op id, so it is neither applied nor audited twice. The
 * hash pointers are written around it in a safe order (key-pointers.ts): claimed before each
 * compare-and-set, tidied once the change is committed (also when found committed by a re-sent
 * command). Then the entry is moved to the log and the hashes involved are announced, so every
 * gateway drops them from its cache at once. The actor is the one the channel set with `runAs`.
 */
export function createKeyWriter(redis: RedisClient, pointers: KeyPointers, outbox: AuditOutbox, logger?: Logger) {
  /** After the commit: an announcement's failure does not undo the change (a retried roll would hand out a second value), so it is logged. */
  async function announce(hashes: string[]): Promise<void> {
    try {
      await redis.publish(redisKeys.changes, JSON.stringify({ hashes: [...new Set(hashes)] }));
    } catch (err) {
      logger?.warn({ err: (err as Error).message }, 'key change stored but not announced; gateways see it when their cache expires');
    }
  }

  /** One change: `plan` says what to write from the record read (it throws to refuse); an entry when something visible changed. */
  async function write(id: string, action: AuditAction, plan: (stored: StoredKey | undefined) => Change | Promise<Change>): Promise<Change> {
    const { planned } = await auditedWrite(redis, outbox, redisKeys.record(id), {
      plan: async (value) => {
        const change = await plan(value.body ? parseStoredKey(value.json) : undefined);
        const visible = Object.keys(change.changes).length > 0 || action === 'roll';
        if (change.unchanged) return { ...change, next: change.after, skip: true as const };
        return { ...change, next: change.after, ...(visible ? { entry: { action, key_id: id, changes: change.changes } } : {}) };
      },
      prepare: async ({ after }) => { if (after) await pointers.claim(after); },
      settle: async ({ before, after }) => {
        if (after) await pointers.tidy(before, after);
        else if (before) await pointers.tidyRemoved(before);
      },
      giveUp: concurrentChange,
      logger,
    });
    return planned;
  }

  return {
    async update(id, action, change, options) {
      const done = await write(id, action, async (before) => {
        if (!before) throw unknownId(id);
        await options?.precondition?.(before);
        return planUpdate(id, before, change);
      });
      if (done.unchanged) return done as Change & { before: StoredKey; after: StoredKey };
      await announce([...liveHashes(done.before!, 0), ...liveHashes(done.after!, 0)]);
      return done as Change & { before: StoredKey; after: StoredKey };
    },
    async insert(entry, allowReplace) {
      const done = await write(entry.id, allowReplace ? 'import' : 'create', (existing) => {
        if (existing && !allowReplace) throw new ApiError('invalid_parameter', { parameter: 'id' }, undefined, `A key with id "${entry.id}" already exists.`);
        const after = recordOf(entry, existing);
        return { ...(existing ? { before: existing } : {}), after, changes: auditChanges(existing, after) };
      });
      // The key-store marker: its absence later tells a lost store from one that never held keys.
      await redis.set(redisKeys.epoch, newEpoch(), 'NX');
      await announce([entry.key_sha256, ...(done.before ? liveHashes(done.before, 0) : [])]);
      return done as Change & { after: StoredKey };
    },
    async remove(id, check) {
      const done = await write(id, 'delete', (stored) => {
        if (!stored) throw unknownId(id);
        check(stored);
        return { before: stored, changes: auditChanges(stored, undefined) };
      });
      await announce(liveHashes(done.before!, 0));
      return done as Change & { before: StoredKey };
    },
  } satisfies KeyWriter;
}
