// gateway/limits/: limits: UTC calendar windows, counters (memory, Redis Lua, the resilient fallback), the
// decision, RateLimit headers, and the refused-authentication table.
import type { Limits } from '../config/gateway-config';
import type { WindowName } from './windows';

/** The state of one window after a decision, as the `RateLimit` headers report it. */
export interface WindowState {
  readonly name: WindowName;
  readonly limit: number;
  readonly remaining: number;
  /** Seconds until the window resets (≥ 1). */
  readonly resetSeconds: number;
  /** Length of the window in seconds (a month's varies). */
  readonly windowSeconds: number;
}

/** The outcome of one request against a key's three windows. A value, never a thrown error. */
export type LimitDecision =
  | { readonly kind: 'allowed'; readonly windows: readonly WindowState[]; readonly store?: 'shared' | 'local' }
  | {
      readonly kind: 'refused';
      readonly code: 'rate_limited' | 'quota_exceeded';
      /** The window that refused: the month's quota outranks the day's, which outranks the minute. */
      readonly window: WindowName;
      readonly retryAfterSeconds: number;
      readonly windows: readonly WindowState[];
      /** Where the request was counted: in Redis for every instance, or in this instance only. */
      readonly store?: 'shared' | 'local';
    }
  | { readonly kind: 'unavailable' };

/**
 * Per-key counters for the per-minute limit and the daily and monthly quotas.
 * `consume` checks all three windows and counts the request in all three as one atomic step;
 * a refused request is counted nowhere. When a quota is exhausted the answer is `quota_exceeded`,
 * even if the per-minute limit is exhausted too (docs/reference.md, error codes).
 */
export interface Counters {
  consume(keyId: string, limits: Limits, nowMs?: number): LimitDecision | Promise<LimitDecision>;
  /** The current state without counting anything (for the headers of answers refused before the limits step). */
  peek(keyId: string, limits: Limits, nowMs?: number): LimitDecision | Promise<LimitDecision>;
  /**
   * Gives back one request counted by `consume` at `countedAtMs` (docs/guarantees.md: a request answered
   * 500 or 503 is not charged), in each of the three windows that is still the one it was counted
   * in; never below zero. `store` says where it was counted (the resilient wrapper routes by it).
   */
  refund(keyId: string, countedAtMs: number, store?: 'shared' | 'local'): void | Promise<void>;
  close?(): Promise<void>;
}

/**
 * The operators' side of the shared counters (the key admin's usage view and delete): what a key
 * has used in its current windows, read without counting, and forgetting it. The request path
 * never calls these.
 */
export interface CounterReadout {
  /** The counts of the key's three windows at `nowMs` (0 where nothing was counted). */
  used(keyId: string, nowMs?: number): Promise<Readonly<Record<WindowName, number>>>;
  /** Forgets the key's counts in the windows of `nowMs`: a new key given the id starts from zero. */
  forget(keyId: string, nowMs?: number): Promise<void>;
}
