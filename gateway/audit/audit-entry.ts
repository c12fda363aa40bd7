import type { Channel } from './actor';

/** Actions the audit log records (one per change of one key). */
export type AuditAction = 'create' | 'import' | 'change' | 'pause' | 'settle' | 'revoke' | 'roll' | 'delete' | 'leak' | 'file_add' | 'file_change' | 'file_remove'
  /** Holder accounts and subscription requests (gateway/accounts/, gateway/requests/): `account_id` names the account. */
  | 'account.create' | 'account.update' | 'account.delete' | 'request.create' | 'request.approve' | 'request.decline';

/** One field's value before and after a change; `null` where it was or became absent. */
export interface FieldChange {
  before: unknown;
  after: unknown;
}

/** One audit entry as readers see it. Never holds a hash or a key value (see `visibleFields`). */
export interface AuditEntry {
  /** Opaque, ordered: the stream entry id with Redis, a counter in memory. */
  id: string;
  /** RFC 3339, UTC, milliseconds. */
  time: string;
  actor: string;
  channel: Channel;
  action: AuditAction;
  key_id: string;
  /** The account an account or request entry is about (absent on key entries). */
  account_id?: string;
  changes: Record<string, FieldChange>;
}

/** Fields that never enter the log: hashes (of the current or previous value) and bookkeeping. */
const HIDDEN = /sha256|hash|secret|token|^created_at$|^updated_at$|^previous_expires_at$|^previous_key_expires_at$/;

/**
 * What an operator may see of a record, flattened for diffing. Hashes are dropped by name; a
 * roll's grace shows as `previous_key_valid_until` (a time, not the previous hash).
 */
function visibleFields(record: Record<string, unknown> | undefined): Record<string, unknown> {
  if (!record) return {};
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(record)) {
    if (HIDDEN.test(name) || value === undefined) continue;
    out[name] = value;
  }
  const until = record.previous_expires_at;
  if (typeof until === 'number') out.previous_key_valid_until = new Date(until).toISOString();
  return out;
}

const same = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b);

/** The visible fields that differ between two versions of a record (absent = `null`). */
export function diffRecords(before: Record<string, unknown> | undefined, after: Record<string, unknown> | undefined): Record<string, FieldChange> {
  const a = visibleFields(before);
  const b = visibleFields(after);
  const changes: Record<string, FieldChange> = {};
  for (const name of [...new Set([...Object.keys(a), ...Object.keys(b)])].sort()) {
    if (!same(a[name], b[name])) changes[name] = { before: a[name] ?? null, after: b[name] ?? null };
  }
  return changes;
}
