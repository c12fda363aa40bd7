import type { Logger } from 'pino';
import type { RedisClient } from '../redis/connect';
import type { GatewayConfig } from '../config/gateway-config';
import type { AuditPage, AuditQuery } from '../audit/audit-log';
import type { CounterReadout } from '../limits/counters';
import type { Actor } from '../audit/actor';
import type { KeyEventSink } from '../webhooks/webhook-event';
import type { KeyPage, KeyView, UsageView } from './key-view';
import type { KeyExpectation } from './key-expectation';
import type { KeyWriter } from './key-writer';
import type { PauseReason } from './pause-reasons';

/**
 * Who asks for a change when a program of the gateway makes it (a billing integration, leaked-key
 * reports) rather than the channel that set `runAs`: the audit entry's actor and channel (e.g.
 * `{name: 'billing:stripe:evt_1', channel: 'billing'}`), and fields added to the webhook events the
 * change sends (e.g. `{source: 'billing'}`).
 */
export interface ChangeOrigin {
  readonly actor?: Actor;
  readonly eventFields?: Readonly<Record<string, unknown>>;
}

/**
 * What a pause may note besides its reason: for `unpaid_renewal`, the open invoice's link (https),
 * which the holder's pages show until the reason is settled (it goes with the reason).
 */
export interface PauseDetails {
  readonly billing_invoice_url?: string;
}

/** What a pause or settle did to one key: its reasons before and after (sorted); `changed` false when it was already so. */
export interface ReasonChange {
  readonly id: string;
  readonly changed: boolean;
  readonly before: readonly PauseReason[];
  readonly after: readonly PauseReason[];
  readonly status: string;
  readonly view: KeyView;
}

/** One key of an account-level pause or settle, as the answer lists it. */
export interface AccountKeyChange {
  id: string;
  status: string;
  pause_reasons: PauseReason[];
  /** False when the key already was so (nothing written, no audit entry, no event). */
  changed: boolean;
  /** The reasons this call added (pause) or removed (settle), when it changed the key. */
  added?: PauseReason[];
  settled?: PauseReason[];
  /** Why the key was left alone: a revoked key is neither paused nor settled. */
  skipped?: 'revoked';
}

/** The answer of an account-level pause or settle: every key of the account, in id order. */
export interface AccountStateChange {
  account: string;
  keys: AccountKeyChange[];
}

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
   * puts the key into an account, ends it, revives it or opens it to every address is an issuing
   * act (change-role.ts): 403 `forbidden` unless `may.issue` (the admin role; true when not given).
   * `expect` (a holder's change): checked in the same atomic write (key-expectation.ts).
   * `origin`: see ChangeOrigin (the billing integration's entitlements).
   */
  set(id: string, input: unknown, may?: { issue: boolean }, expect?: KeyExpectation, origin?: ChangeOrigin): Promise<KeyView>;
  /**
   * Adds `reason` to the key's pause reasons; one the key already has changes nothing (no write, no audit entry, no event). `origin`: see ChangeOrigin;
   * `details`: see PauseDetails (a new invoice link alone is audited, with no event).
   */
  pause(id: string, reason: unknown, origin?: ChangeOrigin, details?: PauseDetails): Promise<KeyView>;
  /**
   * Removes `reason` from the key's pause reasons, or (none given) every reason but `leaked`; one
   * the key does not have changes nothing. Naming `leaked`, or leaving a key paused because it
   * leaked without naming a reason, is 409 `conflict` (only a roll clears `leaked`).
   */
  settle(id: string, reason?: unknown, origin?: ChangeOrigin): Promise<KeyView>;
  /**
   * Adds `reason` to every key of the account (404 for an unknown account); revoked keys are left
   * alone. One audit entry and one event per key changed.
   */
  pauseAccount(accountId: string, reason: unknown, origin?: ChangeOrigin, details?: PauseDetails): Promise<AccountStateChange>;
  /**
   * Removes `reason` (or every reason but `leaked`) from every key of the account. Naming `leaked`
   * is 409; without a reason, a leaked key keeps `leaked` (and stays paused) while its other
   * reasons go, so one leaked key never holds back the account's payment state.
   */
  settleAccount(accountId: string, reason?: unknown, origin?: ChangeOrigin): Promise<AccountStateChange>;
  /** `expect` (a holder's change): checked in the same atomic write (key-expectation.ts). */
  revoke(id: string, expect?: KeyExpectation, origin?: ChangeOrigin): Promise<KeyView>;
  /**
   * A new value for the key; the old one keeps working for `graceSeconds`. `expect` (a holder's
   * roll: the key still theirs, still the version they were shown) is checked in the same atomic
   * write as the roll, so of concurrent rolls from one version one applies (key-expectation.ts).
   */
  roll(id: string, graceSeconds: unknown, expect?: KeyExpectation): Promise<{ id: string; key: string }>;
  /**
   * A value reported leaked (by its SHA-256): true when it is a live value of a key (current, or
   * previous within its grace), which is then marked and handled as `leaks.on_leak` says (once:
   * a value already reported changes nothing more); false when it is no value of this store.
   */
  markLeaked(keySha256: string, report: { url?: string }): Promise<boolean>;
  /** Removes a revoked record for good, which frees its id (docs/guarantees.md); any other state is 400. */
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
  readonly logger?: Logger | undefined;
}
