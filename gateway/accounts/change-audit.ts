import { currentActor } from '../audit/actor';
import type { AuditAction, FieldChange } from '../audit/audit-entry';
import type { MemoryAuditLog } from '../audit/memory-audit-log';

/** What an account or request entry is about: the account, and the key when there is one. */
export interface AuditSubject {
  readonly accountId: string;
  readonly keyId?: string;
}

/**
 * Records a committed change of an account or a request in a store kept in this process's memory,
 * under the current actor (runAs). The Redis stores write each entry with its change instead, in
 * one compare-and-set (gateway/audit/audited-write.ts).
 */
export type ChangeAudit = (action: AuditAction, subject: AuditSubject, changes: Record<string, FieldChange>) => Promise<void>;

export const memoryChangeAudit = (log: MemoryAuditLog): ChangeAudit => async (action, subject, changes) => {
  log.append(currentActor(), action, subject.keyId ?? '', changes, subject.accountId);
};

/** No audit (a store built without one, e.g. a read-only view). */
export const noAudit: ChangeAudit = async () => undefined;
