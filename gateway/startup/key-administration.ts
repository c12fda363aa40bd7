/** Key administration: the Redis key store's writer, with its own connection, for the admin API and the holders' portal. */
import { servesAdministration } from '../workers/worker-side';
import type { Logger } from 'pino';
import type { Env } from '../config/env';
import type { GatewayConfig } from '../config/gateway-config';
import { createKeyAdmin, type KeyAdmin } from '../keys/key-admin';
import { whenReady, type RedisClient } from '../redis/connect';
import type { AuditRetention } from '../audit/redis-audit-log';
import { createKeyEventSink } from '../webhooks/key-events';
import type { KeyStores } from './key-store';
import type { SharedRedis } from './redis-and-counters';
import { BACKGROUND_COMMAND_TIMEOUT_MS } from './usage-and-webhooks';

/** How long start-up waits for key administration's own connection (the shared one is already up). */
const ADMIN_CONNECTION_WAIT_MS = 3_000;

/**
 * Waits (bounded) until key administration's own connection is ready, so the listeners it serves
 * (admin API, portal, providers' listener) do not answer their first requests 503 while it is still
 * connecting. Not when the shared connection is not up either: Redis is away, and start-up has
 * already waited for it once.
 */
export async function administrationReady(administration: KeyAdministration | undefined, redis: SharedRedis | undefined): Promise<void> {
  if (!administration || redis?.client.status !== 'ready') return;
  await whenReady(administration.redis, ADMIN_CONNECTION_WAIT_MS);
}

/** Key administration, when the admin API is on and Redis is the key store. */
export interface KeyAdministration {
  readonly keyAdmin: KeyAdmin;
  /** The admin API's own connection. */
  readonly redis: RedisClient;
  /** How much of the audit log Redis keeps (AUDIT_MAX_ENTRIES, AUDIT_RETENTION_DAYS). */
  readonly auditRetention: AuditRetention;
}

export const adminOn = (env: Env): boolean => env.ADMIN_TOKEN !== undefined || env.ADMIN_TOKENS_FILE !== undefined;

/** Key administration for the admin API and, when `portalOn`, the holders' portal (its changes go through it too). */
export function startKeyAdmin(env: Env, config: GatewayConfig, redis: SharedRedis | undefined, keys: KeyStores, logger: Logger, portalOn = false): KeyAdministration | undefined {
  if (!(adminOn(env) || portalOn) || !keys.redisStore || !redis) return undefined;
  // The other workers of GATEWAY_WORKERS serve none of the listeners it is for: no writer there.
  if (!servesAdministration(env)) return undefined;
  // The admin connection waits longer than the hot path's: a write that times out on the caller
  // may still be applied, and the operator would be told it failed (the CLI waits as long).
  const adminRedis = redis.connect('admin', false, BACKGROUND_COMMAND_TIMEOUT_MS);
  const audit = { maxEntries: env.AUDIT_MAX_ENTRIES, days: env.AUDIT_RETENTION_DAYS };
  const keyAdmin = createKeyAdmin(adminRedis, config, logger, audit, createKeyEventSink(adminRedis, logger));
  return { keyAdmin, redis: adminRedis, auditRetention: audit };
}
