import type { Logger } from 'pino';
import type { RedisClient } from '../redis/connect';
import { currentActor } from '../audit/actor';
import type { AuditAction, FieldChange } from '../audit/audit-entry';
import type { MemoryAuditLog } from '../audit/memory-audit-log';
import { createRedisAuditLog, DEFAULT_AUDIT_RETENTION, type AuditRetention } from '../audit/redis-audit-log';
import { redisKeys } from '../keys/redis-layout';

/** What an account or request entry is about: the account, and the key when there is one. */
export interface AuditSubject {
  readonly accountId: string;
  readonly keyId?: string;
}

/**
 * Records a committed change of an account or a request in the key store's audit log, under the
 * current actor (runAs). Written after the change, as the key admin does: a failure is logged, not
 * reported as a failed change.
 */
export type ChangeAudit = (action: AuditAction, subject: AuditSubject, changes: Record<string, FieldChange>) => Promise<void>;

export const memoryChangeAudit = (log: MemoryAuditLog): ChangeAudit => async (action, subject, changes) => {
  log.append(currentActor(), action, subject.keyId ?? '', changes, subject.accountId);
};

/** Into the Redis store's audit stream (`lgw:audit`), beside the key changes. */
export function redisChangeAudit(redis: RedisClient, logger?: Logger, retention: AuditRetention = DEFAULT_AUDIT_RETENTION): ChangeAudit {
  const log = createRedisAuditLog(redis, redisKeys.audit, retention);
  return async (action, subject, changes) => {
    try {
      const tx = redis.pipeline();
      log.append(tx, currentActor(), action, subject.keyId ?? '', changes, subject.accountId);
      await tx.exec();
    } catch (err) {
      logger?.error({ err: (err as Error).message, account_id: subject.accountId, action }, 'change stored but not written to the audit log');
    }
  };
}

/** No audit (a store built without one, e.g. a read-only view). */
export const noAudit: ChangeAudit = async () => undefined;
