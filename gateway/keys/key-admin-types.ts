import type { Logger } from 'pino';
import type { RedisClient } from '../redis/connect';
import type { GatewayConfig, LeakAction } from '../config/gateway-config';
import type { AuditPage, AuditQuery } from '../audit/audit-log';
import type { CounterReadout } from '../limits/counters';
import type { KeyEventSink } from '../webhooks/webhook-event';
import type { KeyPage, KeyView, UsageView } from './key-view';
import type { KeyWriter } from './key-writer';

/**
 * Key management over the Redis store, shared by the CLI, the admin API and the console, on any
 * topology. Reads never return a hash or a value; every change is audited and announced to the
 * gateways (key-writer.ts); the actor is the one the channel set with `runAs` (audit/actor.ts).
 */
export interface KeyAdmin {
  /** A new key: the value is returned once and only its hash is stored. */
  create(input: unknown): Promise<{ id: string; key: string }>;
  /** One page of records (ids in SSCAN order, sorted within the page); `next_cursor` null on the last. */
  list(options?: { limit?: number; cursor?: string }): Promise<KeyPage>;
  show(id: string): Promise<KeyView>;
  /** The key's current minute, day and month: used, limit, remaining, reset. */
  usage(id: string): Promise<UsageView>;
  /**
   * Changes the fields `input` names (`expires_at: null`, `note: null` remove them). A change that
   * ends the key (`expires_at` in the past), revives an expired one, or opens it to every address
   * (`any`) is an issuing act: 403 `forbidden` unless `may.issue` (the admin role; true when not given).
   */
  set(id: string, input: unknown, may?: { issue: boolean }): Promise<KeyView>;
  pause(id: string, reason: unknown): Promise<KeyView>;
  settle(id: string): Promise<KeyView>;
  revoke(id: string): Promise<KeyView>;
  /** A new value for the key; the old one keeps working for `graceSeconds`. */
  roll(id: string, graceSeconds: unknown): Promise<{ id: string; key: string }>;
  /**
   * A value reported leaked (by its SHA-256): true when it is a live value of a key (current, or
   * previous within its grace), which is then marked and handled as `report.action` says (once:
   * a value already reported changes nothing more); false when it is no value of this store.
   */
  markLeaked(keySha256: string, report: { url?: string; action: LeakAction }): Promise<boolean>;
  /** Removes a revoked record for good, which frees its id (CONTRACT part 7); any other state is 400. */
  delete(id: string): Promise<void>;
  /** New tier defaults (hot reload): views and usage report the limits the gateway enforces. */
  updateConfig(next: GatewayConfig): void;
  /** The audit log of this store (newest first, paged). */
  readAudit(query: AuditQuery): Promise<AuditPage>;
  /**
   * Upserts every record of a YAML keys file (an export restores the store); returns the ids. Demo
   * keys (values published in the README) are refused unless `allowDemo`: before anything is written.
   */
  import(file: string, options?: { allowDemo?: boolean }): Promise<string[]>;
}

/** What the key admin's operations share. */
export interface KeyAdminContext {
  readonly redis: RedisClient;
  config(): GatewayConfig;
  readonly writer: KeyWriter;
  readonly counters: CounterReadout;
  /** Key events (webhooks) after a committed change: ids and changed fields, never a hash or value. */
  readonly emit: KeyEventSink;
  readonly logger?: Logger;
}
