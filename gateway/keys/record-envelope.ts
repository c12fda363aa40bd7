import type { PendingAuditEntry } from '../audit/redis-audit-append';
import { outboxJson, readOutboxValue } from '../audit/outbox-value';
import { parseStoredKey, type StoredKey } from './redis-layout';

/**
 * A key record's Redis value: the record, its audit entries not yet in the log and the op of the
 * change that wrote it (gateway/audit/outbox-value.ts says how they are kept, for every record the
 * outbox serves). A tombstone, or any value that is not a record, is no record (parseStoredKey).
 */
export interface RecordEnvelope {
  /** The value as read (the compare-and-set's expected value). */
  readonly json: string | null;
  readonly stored?: StoredKey;
  readonly pending: readonly PendingAuditEntry[];
  readonly op?: string;
}

export function readEnvelope(json: string | null): RecordEnvelope {
  const value = readOutboxValue(json);
  const stored = value.body ? parseStoredKey(json) : undefined;
  return { json, ...(stored ? { stored } : {}), pending: value.pending, ...(value.op !== undefined ? { op: value.op } : {}) };
}

/** The value to write: the record (or a tombstone when it is deleted) with its pending entries; null when nothing is left. */
export const envelopeJson = (stored: StoredKey | undefined, pending: readonly PendingAuditEntry[], op: string | undefined): string | null =>
  outboxJson(stored, pending, op);
