import type { Logger } from 'pino';
import type { RedisClient } from '../redis/connect';
import { createAuditOutbox, type AuditOutbox } from '../audit/audit-outbox';
import { createAuditAppender } from '../audit/redis-audit-append';
import { DEFAULT_AUDIT_RETENTION, type AuditRetention } from '../audit/redis-audit-log';
import { redisKeys } from './redis-layout';

/**
 * The outbox of the Redis key store's audit log (`lgw:audit`), shared by every record it serves:
 * keys, accounts, subscription requests. One pending set, so a read of the log moves the entries
 * a cut-off writer left in any of them. Members written before the set held record keys are key
 * ids (a key id has no ':').
 */
export function keyStoreOutbox(redis: RedisClient, retention: AuditRetention = DEFAULT_AUDIT_RETENTION, logger?: Logger): AuditOutbox {
  return createAuditOutbox(redis, createAuditAppender(redis, redisKeys.audit, retention), {
    pendingSet: redisKeys.auditPending,
    recordOf: (member) => (member.includes(':') ? member : redisKeys.record(member)),
    logger,
  });
}
