import type { PendingAuditEntry } from '../audit/redis-audit-append';
import { parseStoredKey, type StoredKey } from './redis-layout';

/**
 * What a record's Redis value holds besides the record: the audit entries of its changes not yet
 * in the log (`audit_outbox`, written by the same compare-and-set as the change: one atomic step on
 * the record's own slot, on every topology), and the op of the change that wrote it (`op`, so a
 * writer whose compare-and-set was re-sent after a reconnect recognises its own change). A deleted
 * record whose entry is not yet in the log is a tombstone: `{"deleted": true, ...}`, which no
 * reader takes for a record (parseStoredKey refuses it), removed once drained.
 */
export interface RecordEnvelope {
  /** The value as read (the compare-and-set's expected value). */
  readonly json: string | null;
  readonly stored?: StoredKey;
  readonly pending: readonly PendingAuditEntry[];
  readonly op?: string;
}

const isPending = (v: unknown): v is PendingAuditEntry => {
  const e = v as Partial<PendingAuditEntry> | null;
  return typeof e === 'object' && e !== null && typeof e.op === 'string' && typeof e.action === 'string' && typeof e.key_id === 'string' && typeof e.changes === 'object';
};

export function readEnvelope(json: string | null): RecordEnvelope {
  if (json === null) return { json, pending: [] };
  let raw: { audit_outbox?: unknown; op?: unknown } = {};
  try {
    raw = JSON.parse(json) as typeof raw;
  } catch {
    // a corrupt value: no record, nothing pending
  }
  const stored = parseStoredKey(json);
  const pending = Array.isArray(raw?.audit_outbox) ? raw.audit_outbox.filter(isPending) : [];
  return { json, ...(stored ? { stored } : {}), pending, ...(typeof raw?.op === 'string' ? { op: raw.op } : {}) };
}

/** The value to write: the record (or a tombstone when it is deleted) with its pending entries; null when nothing is left. */
export function envelopeJson(stored: StoredKey | undefined, pending: readonly PendingAuditEntry[], op: string | undefined): string | null {
  const extra = { ...(pending.length ? { audit_outbox: pending } : {}), ...(op !== undefined ? { op } : {}) };
  if (stored) return JSON.stringify({ ...stored, ...extra });
  return pending.length ? JSON.stringify({ deleted: true, ...extra }) : null;
}
