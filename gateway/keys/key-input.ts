import { invalidParameter } from '../http/invalid-parameter';
import { z } from 'zod';
import { LimitsSchema, LimitValueSchema } from '../config/gateway-config';
import { ApiError } from '../errors';
import { KeyEntryFields, type KeyEntry } from './key-entry';
import { checkKeyEntry } from './key-entry-check';
import { PauseReasonSchema } from './pause-reasons';
import type { StoredKey } from './redis-layout';

/**
 * What operators send to the key admin (admin API, console, CLI), and how it is checked: every bad
 * field is 400 `invalid_parameter` naming it. The fields are the record's own (key-entry.ts), so a
 * field added there is added here by naming it in a `pick`.
 */

/**
 * Limits come as the `limits` object that reads return (`{"limits": {"per_minute": 10}}`), or as the
 * flat fields accepted from the first release; one field given both ways is refused (which wins
 * would be a guess).
 */
const LimitFields = {
  limits: LimitsSchema.partial().strict().optional(),
  per_minute: LimitValueSchema.optional(),
  per_day: LimitValueSchema.optional(),
  per_month: LimitValueSchema.optional(),
};
export const CreateSchema = KeyEntryFields.pick({ id: true, tier: true, countries: true, address: true, addresses: true, expires_at: true, note: true, account: true })
  .extend(LimitFields)
  .strict();
/** An update names the fields it changes; `expires_at: null` and `note: null` remove them. */
export const SetSchema = KeyEntryFields.pick({ tier: true, countries: true, address: true, addresses: true })
  .partial()
  .extend({
    ...LimitFields,
    expires_at: KeyEntryFields.shape.expires_at.unwrap().nullable().optional(),
    note: KeyEntryFields.shape.note.unwrap().nullable().optional(),
    account: KeyEntryFields.shape.account.unwrap().nullable().optional(),
  })
  .strict();
/** A pause names its reason (`operator` for an operator's pause without a payment reason), and for an unpaid renewal perhaps the open invoice's link. */
export const PauseSchema = z.object({ reason: PauseReasonSchema, billing_invoice_url: KeyEntryFields.shape.billing_invoice_url }).strict();
/** A pause's input checked: the reason, and an invoice link only with `unpaid_renewal`. */
export function parsePause(reason: unknown, details: object | undefined): z.infer<typeof PauseSchema> {
  const input = parseInput(PauseSchema, { ...(reason !== undefined ? { reason } : {}), ...details });
  if (input.billing_invoice_url !== undefined && input.reason !== 'unpaid_renewal') throw invalidParameter('billing_invoice_url', 'goes only with the reason unpaid_renewal');
  return input;
}
/** A settle names the reason it settles, or none (every reason but `leaked`). */
export const SettleSchema = z.object({ reason: PauseReasonSchema.optional() }).strict();
export const RollSchema = z.object({ grace_seconds: z.number().int().min(0).max(90 * 86400) });

type LimitName = 'per_minute' | 'per_day' | 'per_month';
export type LimitInput = { limits?: Partial<Record<LimitName, number>> } & Partial<Record<LimitName, number>>;
const LIMIT_NAMES: readonly LimitName[] = ['per_minute', 'per_day', 'per_month'];

/** The limits an input names, from either spelling; 400 naming the field when it is given twice. */
function limitsOf(input: LimitInput): Partial<Record<LimitName, number>> {
  const out: Partial<Record<LimitName, number>> = { ...input.limits };
  for (const name of LIMIT_NAMES) {
    if (input[name] === undefined) continue;
    if (out[name] !== undefined) {
      throw invalidParameter(name, 'given both flat and inside limits; give it once');
    }
    out[name] = input[name];
  }
  return out;
}

/** The record's `limits` after applying the input's to `base` (none when nothing is overridden). */
export function overrides(input: LimitInput, base: StoredKey['limits'] = {}): { limits?: StoredKey['limits'] } {
  const limits = { ...base, ...limitsOf(input) };
  return Object.keys(limits).length ? { limits } : {};
}

/** Validates operator input; a bad field is 400 `invalid_parameter` naming it. */
export function parseInput<S extends z.ZodTypeAny>(schema: S, input: unknown): z.infer<S> {
  const parsed = schema.safeParse(input);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  const parameter = issue.path.length ? String(issue.path[0]) : 'body';
  throw invalidParameter(parameter, issue.message);
}

/** Normalises countries and addresses; a bad one is 400 `invalid_parameter` naming the field. */
export function checked<T extends Partial<KeyEntry>>(fields: T, complete = false): T {
  const result = checkKeyEntry(fields, complete);
  if (result.ok) return result.value;
  const parameter = String(result.issue.path[0]);
  throw invalidParameter(parameter, result.issue.message);
}

/** 404 for an id with no record. */
export const unknownId = (id: string): ApiError => new ApiError('not_found', {}, undefined, `No key with id "${id}".`);
/** 400 for a change the key's state does not allow (e.g. pausing a revoked key). */
export const notAllowed = (message: string): ApiError => new ApiError('invalid_parameter', { parameter: 'id' }, undefined, message);
