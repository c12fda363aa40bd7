import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { RedisClient } from '../redis/connect';
import { compareAndSet } from '../redis/compare-and-set';
import { currentActor } from './actor';
import type { AuditOutbox } from './audit-outbox';
import { LOST, untilSet } from './cas-loop';
import { outboxJson, readOutboxValue, type OutboxValue } from './outbox-value';
import type { PendingAuditEntry } from './redis-audit-append';

/** What an entry says; the op, actor and channel are the write's. */
export type EntryFields = Pick<PendingAuditEntry, 'action' | 'key_id' | 'changes' | 'account_id'>;

export interface PlannedWrite {
  /** The record's fields to write; undefined: the record is deleted. */
  readonly next: object | undefined;
  /** The change's audit entry; none when nothing visible changed. */
  readonly entry?: EntryFields;
  /** The change asked for is already so: nothing is written, audited or settled. */
  readonly skip?: true;
}

export interface AuditedWrite<P extends PlannedWrite> {
  /** What to write from the value read (it throws to refuse the change). */
  plan(value: OutboxValue): P | Promise<P>;
  /** Runs before each compare-and-set: what must exist before the record names it (indexes, pointers). */
  prepare?(planned: P): Promise<void>;
  /**
   * Runs once the change is committed, whether this writer saw its compare-and-set answer or found
   * its op in the record after a lost answer: what may only go once the record stopped naming it
   * (stale pointers). Before the entry is moved to the log.
   */
  settle?(planned: P): Promise<void>;
  /** The error after too many lost races. */
  giveUp(): Error;
  /** Leave the entry in the record (the caller drains it when the change is complete). */
  keepPending?: boolean;
  logger?: Logger | undefined;
}

/**
 * One change of one record (any Redis key holding a JSON object: an account, a subscription
 * request, a key) with its audit entry, in one compare-and-set of the record's value (outbox-value.ts),
 * so the change and its entry are one atomic step on the record's slot, on every topology.
 * Retried when another writer got there first. The write carries an op id: a writer whose
 * compare-and-set ran but whose answer was lost (a cut connection; a cluster client may re-send it,
 * and the re-sent one then finds the value changed) reads its op back and takes the change as
 * done, so it is neither applied nor audited twice. Then the entry is moved to the log (a failure
 * there is logged: the next read of the log moves it). The actor is the one `runAs` set.
 */
export async function auditedWrite<P extends PlannedWrite>(redis: RedisClient, outbox: AuditOutbox, record: string, w: AuditedWrite<P>): Promise<{ planned: P; op: string }> {
  const op = randomUUID();
  const actor = currentActor();
  let attempt: P | undefined;
  const landed = async (): Promise<boolean> => readOutboxValue(await redis.get(record)).op === op;
  const planned = await untilSet(async () => {
    const value = readOutboxValue(await redis.get(record));
    if (attempt && value.op === op) return attempt;
    const next = await w.plan(value);
    if (next.skip) return next;
    attempt = next;
    const pending = next.entry ? [...value.pending, { op, actor: actor.name, channel: actor.channel, ...next.entry }] : value.pending;
    if (pending.length) await outbox.note(record);
    await w.prepare?.(next);
    try {
      return (await compareAndSet(redis, record, value.json, outboxJson(next.next, pending, op))) ? next : LOST;
    } catch (err) {
      if (await landed().catch(() => false)) return next;
      throw err;
    }
  }, w.giveUp);
  if (planned.skip) return { planned, op };
  await w.settle?.(planned);
  if (!w.keepPending) await drainLogged(outbox, record, w.logger);
  return { planned, op };
}

/** Moves the record's pending entries to the log; a failure is logged (the change stands: the next read of the log moves them). */
export async function drainLogged(outbox: AuditOutbox, record: string, logger?: Logger): Promise<void> {
  await outbox.drain(record).catch((err: unknown) => logger?.warn({ err: (err as Error).message, record }, 'change and its audit entry stored; the entry reaches the log at the next read'));
}
