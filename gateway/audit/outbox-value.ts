import type { PendingAuditEntry } from './redis-audit-append';

/**
 * A record's Redis value as the audit outbox sees it, whatever the record (a key, an account, a
 * subscription request): a JSON object holding the record's own fields, the audit entries of its
 * changes not yet in the log (`audit_outbox`, written by the same compare-and-set as the change:
 * one atomic step on the record's own slot, on every topology), and the op of the change that
 * wrote it (`op`, so a writer whose compare-and-set was re-sent after a reconnect recognises its
 * own change). A deleted record whose entry is not yet in the log is a tombstone,
 * `{"deleted": true, ...}`, which no reader takes for a record, removed once drained.
 */
export interface OutboxValue {
  /** The value as read (the compare-and-set's expected value). */
  readonly json: string | null;
  /** The record's own fields; undefined when absent, a tombstone or not a JSON object. */
  readonly body?: Record<string, unknown>;
  readonly pending: readonly PendingAuditEntry[];
  readonly op?: string;
}

const isPending = (v: unknown): v is PendingAuditEntry => {
  const e = v as Partial<PendingAuditEntry> | null;
  return typeof e === 'object' && e !== null && typeof e.op === 'string' && typeof e.action === 'string' && typeof e.key_id === 'string' && typeof e.changes === 'object';
};

export function readOutboxValue(json: string | null): OutboxValue {
  if (json === null) return { json, pending: [] };
  let raw: unknown;
  try {
    raw = JSON.parse(json);
  } catch {
    return { json, pending: [] }; // a corrupt value: no record, nothing pending
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return { json, pending: [] };
  const { audit_outbox: outbox, op, ...body } = raw as Record<string, unknown>;
  const pending = Array.isArray(outbox) ? outbox.filter(isPending) : [];
  return { json, ...(body.deleted === true ? {} : { body }), pending, ...(typeof op === 'string' ? { op } : {}) };
}

/** The value to write: the record (or a tombstone when it is deleted) with its pending entries; null when nothing is left. */
export function outboxJson(body: object | undefined, pending: readonly PendingAuditEntry[], op: string | undefined): string | null {
  const extra = { ...(pending.length ? { audit_outbox: pending } : {}), ...(op !== undefined ? { op } : {}) };
  if (body) return JSON.stringify({ ...body, ...extra });
  return pending.length ? JSON.stringify({ deleted: true, ...extra }) : null;
}
