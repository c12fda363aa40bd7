import { z } from 'zod';

/**
 * Why a key is paused. A key holds a set of reasons and is paused while the set is not empty:
 * - `unpaid_renewal`: a renewal was not paid (settled by the payment);
 * - `payment_dispute`: a payment is disputed (settled when the dispute is resolved);
 * - `leaked`: the key's value was found in public (only a roll clears it, never a settle);
 * - `operator`: an operator paused it without a payment reason (settled by an operator).
 * Sorted, as records and views hold them.
 */
export const PAUSE_REASONS = ['leaked', 'operator', 'payment_dispute', 'unpaid_renewal'] as const;
export type PauseReason = (typeof PAUSE_REASONS)[number];
export const PauseReasonSchema = z.enum(PAUSE_REASONS);

/** The reason no settle clears: only a roll gives the key a value nobody has seen. */
export const LEAKED: PauseReason = 'leaked';
/** The reason an open invoice's link (`billing_invoice_url`) goes with. */
export const UNPAID: PauseReason = 'unpaid_renewal';

const KNOWN = new Set<string>(PAUSE_REASONS);
export const isPauseReason = (v: unknown): v is PauseReason => typeof v === 'string' && KNOWN.has(v);

/** Each reason once, in the one order records and views use. */
export const sortedReasons = (reasons: Iterable<PauseReason>): PauseReason[] => [...new Set(reasons)].sort();

/** The two ways a record names its reasons: the set, or (records and files written before it) one. */
export interface PauseFields {
  readonly pause_reasons?: readonly PauseReason[] | undefined;
  readonly pause_reason?: PauseReason | undefined;
  readonly billing_invoice_url?: string | undefined;
}

/** A record's reasons as a sorted set: `pause_reasons`, else `pause_reason` as a set of one, else none. */
export function pauseReasonsOf(record: PauseFields): PauseReason[] {
  if (record.pause_reasons) return sortedReasons(record.pause_reasons);
  return record.pause_reason !== undefined ? [record.pause_reason] : [];
}

/** The reasons a record holds as its state: those of a paused record (a leftover reason on an active record is none). */
export const heldReasons = (record: PauseFields & { status: string }): PauseReason[] => (record.status === 'paused' ? pauseReasonsOf(record) : []);

/**
 * A record with `reasons` as its set, in the stored form: `pause_reasons` sorted (absent when
 * empty), the single `pause_reason` of older records dropped, and the status kept consistent
 * (paused iff a reason is held; a revoked key stays revoked and holds none). The open invoice's
 * link goes when `unpaid_renewal` does.
 */
export function withPauseReasons<T extends PauseFields & { status: string }>(record: T, reasons: Iterable<PauseReason>): T {
  const { pause_reasons: _set, pause_reason: _one, billing_invoice_url: link, ...kept } = record;
  const set = sortedReasons(reasons);
  const rest = link !== undefined && set.includes(UNPAID) && record.status !== 'revoked' ? { ...kept, billing_invoice_url: link } : kept;
  if (record.status === 'revoked') return rest as T;
  return (set.length ? { ...rest, status: 'paused', pause_reasons: set } : { ...rest, status: 'active' }) as T;
}

/** Whether two sets (each sorted) hold the same reasons. */
export const sameReasons = (a: readonly PauseReason[], b: readonly PauseReason[]): boolean => a.length === b.length && a.every((r, i) => r === b[i]);

/** What a reason means for views and events: the set (sorted) and, for readers of the single field, its first. */
export function reasonFields(reasons: readonly PauseReason[]): { pause_reasons?: PauseReason[]; pause_reason?: PauseReason } {
  return reasons.length ? { pause_reasons: [...reasons], pause_reason: reasons[0]! } : {};
}
