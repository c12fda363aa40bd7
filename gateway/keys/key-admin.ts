import type { Logger } from 'pino';
import type { RedisClient } from '../redis/connect';
import type { GatewayConfig } from '../config/gateway-config';
import { createRedisAuditLog, DEFAULT_AUDIT_RETENTION, type AuditRetention } from '../audit/redis-audit-log';
import type { CounterReadout } from '../limits/counters';
import { createRedisCounters } from '../limits/redis-counters';
import type { KeyEventSink } from '../webhooks/webhook-event';
import { keyAdminChanges } from './key-admin-changes';
import { keyAdminLeaks } from './key-admin-leaks';
import { keyAdminReads } from './key-admin-reads';
import { keyAdminAccounts } from './key-admin-accounts';
import { keyAdminStates } from './key-admin-states';
import type { KeyAdmin, KeyAdminContext } from './key-admin-types';
import { createKeyWriter } from './key-writer';
import { keyStoreOutbox } from './key-store-outbox';
import { createKeyPointers } from './key-pointers';
import { redisKeys } from './redis-layout';

export type { AccountStateChange, ChangeOrigin, KeyAdmin, PauseDetails } from './key-admin-types';
export { PAUSE_REASONS, type PauseReason } from './pause-reasons';
export type { KeyPage, KeyView, UsageView } from './key-view';

/**
 * The key admin over the Redis store at `redis` (KeyAdmin says what it does). Counters are read and
 * cleared through `counters` (by default the shared Redis counters on the same connection).
 */

export function createKeyAdmin(
  redis: RedisClient,
  initialConfig: GatewayConfig,
  logger?: Logger,
  auditRetention: AuditRetention = DEFAULT_AUDIT_RETENTION,
  events?: KeyEventSink,
  counters: CounterReadout = createRedisCounters(redis),
): KeyAdmin {
  let config = initialConfig;
  const audit = createRedisAuditLog(redis, redisKeys.audit, auditRetention);
  const outbox = keyStoreOutbox(redis, auditRetention, logger);
  const context: KeyAdminContext = {
    redis,
    config: () => config,
    writer: createKeyWriter(redis, createKeyPointers(redis), outbox, logger),
    counters,
    emit: events ?? (async () => undefined),
    logger,
  };
  const allStates = keyAdminStates(context);
  const { pauseFor: _p, settleFor: _s, ...states } = allStates;
  return {
    ...keyAdminReads(context),
    ...keyAdminChanges(context),
    ...states,
    ...keyAdminAccounts(context, allStates),
    ...keyAdminLeaks(context),
    updateConfig(next) {
      config = next;
    },
    // Entries a cut-off writer left in a record reach the log before it is read.
    async readAudit(query) {
      await outbox.sweep().catch((err: unknown) => logger?.warn({ err: (err as Error).message }, 'pending audit entries not moved to the log before reading it'));
      return audit.read(query);
    },
  };
}
