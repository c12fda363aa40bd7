import type { Router } from 'express';
import type { Logger } from 'pino';
import type { RedisClient } from '../redis/connect';
import type { KeyAdmin } from '../keys/key-admin';
import type { AuditRetention } from '../audit/redis-audit-log';
import { keyStoreOutbox } from '../keys/key-store-outbox';
import type { KeyEventSink } from '../webhooks/webhook-event';
import type { AccountStore } from '../accounts/account-store';
import { createAccountRoutes, ACCOUNT_PATHS } from '../accounts/account-routes';
import { createRedisAccountStore, type RedisAccountStore } from '../accounts/redis-account-store';
import { createMemoryLinkTokens, createRedisLinkTokens, type LinkTokens } from '../accounts/link-tokens';
import { createFileAccountStore, type FileAccountStore } from '../accounts/file-account-store';
import { applyThroughKeyAdmin } from './apply-change';
import { createRedisRequestStore } from './redis-request-store';
import { createRequestRoutes, REQUEST_PATHS } from './request-routes';
import type { RequestStore } from './request-store';

/** What holders' features need (the admin API, the console, the portal): accounts, requests, sign-in links. */
export interface HolderStores {
  readonly accounts: AccountStore;
  /** Absent with the keys file (read-only: nothing to request). */
  readonly requests?: RequestStore;
  readonly linkTokens?: LinkTokens;
}

/**
 * The holders' stores over the Redis key store, for start-up: each change written with its entry
 * for the key store's log, through the key admin's outbox (the same pending set, so the admin's
 * reads of the log move entries a cut-off writer left), `subscription.*` events into the same sink as the key admin's, approvals applied through
 * `keyAdmin` (so every instance sees them at once, through the key store's change channel).
 */
export function createRedisHolderStores(redis: RedisClient, keyAdmin: KeyAdmin, o: { logger?: Logger; events?: KeyEventSink; retention?: AuditRetention } = {}): Required<HolderStores> & { accounts: RedisAccountStore } {
  const logger = o.logger ? { logger: o.logger } : {};
  const outbox = keyStoreOutbox(redis, o.retention, o.logger);
  return {
    accounts: createRedisAccountStore(redis, outbox, o.logger),
    requests: createRedisRequestStore(redis, { apply: applyThroughKeyAdmin(keyAdmin), outbox, ...logger, ...(o.events ? { events: o.events } : {}) }),
    linkTokens: createRedisLinkTokens(redis),
  };
}

/**
 * The holders' stores with the keys file as the key store: its `accounts:` list (read-only, reread
 * when the file changes), sign-in links in this process's memory, no requests (nothing to change).
 */
export function createFileHolderStores(keysFile: string, logger?: Logger): HolderStores & { accounts: FileAccountStore; linkTokens: LinkTokens } {
  return { accounts: createFileAccountStore(keysFile, undefined, logger), linkTokens: createMemoryLinkTokens() };
}

/** The admin API's `/admin/accounts` and `/admin/requests` (AdminExtensions: routers and their methods). */
export function holderAdminRoutes(stores: HolderStores): { routers: Router[]; methods: Record<string, string> } {
  return {
    routers: [createAccountRoutes(stores.accounts), ...(stores.requests ? [createRequestRoutes(stores.requests)] : [])],
    methods: { ...ACCOUNT_PATHS, ...(stores.requests ? REQUEST_PATHS : {}) },
  };
}
