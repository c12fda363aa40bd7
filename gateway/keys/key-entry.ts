import { z } from 'zod';
import { LimitsSchema } from '../config/gateway-config';
import { PAUSE_REASONS, PauseReasonSchema } from './pause-reasons';
import { MAX_ADDRESSES, MAX_COUNTRIES, MAX_INVOICE_URL, MAX_LEAK_URL, MAX_NOTE } from './record-bounds';

export { MAX_NOTE } from './record-bounds';

/** A SHA-256 as 64 hex characters (either case; stored lower-case). */
export const SHA256_HEX = /^[0-9a-fA-F]{64}$/;
/** An open invoice's link: https, nothing that could leave an HTML attribute. */
export const INVOICE_URL = /^https:\/\/[^\s"'<>\\`]+$/;
/** A key id: what docs/keys-and-accounts.md allows. */
export const KEY_ID = /^[A-Za-z0-9._-]{1,64}$/;

/**
 * The fields of a key record, exactly as docs/keys-and-accounts.md names them (the Redis store adds its own).
 * This schema checks the structure only; `checkKeyEntry` (key-entry-check.ts) then checks and
 * normalises what needs code (countries, address, field combinations). Two plain steps rather than
 * zod effects: effects cost ~7 µs per entry each, seconds on a 100,000-key file. A new optional
 * field is added here (and, if large files should stay fast, to key-entry-fast-check.ts).
 */
export const KeyEntryFields = z.object({
  id: z.string().regex(KEY_ID, 'must be 1 to 64 characters of A-Z a-z 0-9 . _ -'),
  key_sha256: z.string().regex(SHA256_HEX, 'must be the SHA-256 of the key value as 64 hex characters'),
  tier: z.enum(['standard', 'advanced']),
  countries: z
    .array(z.string())
    .min(1, 'must list at least one country')
    .max(MAX_COUNTRIES, `must list at most ${MAX_COUNTRIES} countries (the assigned ISO 3166-1 codes, each once)`),
  /** The first release's one address; read as a list of one (an entry has this or `addresses`). */
  address: z.string().optional(),
  addresses: z
    .array(z.string())
    .min(1, 'must list at least one address or range')
    .max(MAX_ADDRESSES, `must list at most ${MAX_ADDRESSES} addresses or ranges`)
    .optional(),
  status: z.enum(['active', 'paused', 'revoked']),
  /** Why a paused key is paused (pause-reasons.ts): a set, sorted when stored; the key is paused iff it holds one. */
  pause_reasons: z.array(PauseReasonSchema).max(PAUSE_REASONS.length, 'must name each reason at most once').optional(),
  /** The first release's one reason; read as a set of one (pauseReasonsOf). */
  pause_reason: PauseReasonSchema.optional(),
  limits: LimitsSchema.partial().strict().optional(),
  /** From this instant on the key is refused with 401 (RFC 3339 with an offset or Z). */
  expires_at: z.string().datetime({ offset: true, message: 'must be an RFC 3339 date-time with a time zone, e.g. 2027-01-31T00:00:00Z' }).optional(),
  /** For operators only: never in an answer to a caller, never logged. */
  note: z.string().max(MAX_NOTE, `must be at most ${MAX_NOTE} characters`).optional(),
  /** The holder account the key belongs to (gateway/accounts/); absent: an operator's key no holder sees. */
  account: z.string().regex(KEY_ID, 'must be an account id: 1 to 64 characters of A-Z a-z 0-9 . _ -').optional(),
  /**
   * The open invoice of an unpaid renewal, which the holder's pages link while the key is paused for
   * it (written by the billing integration). https only: it is shown as a link.
   */
  billing_invoice_url: z
    .string()
    .max(MAX_INVOICE_URL, `must be at most ${MAX_INVOICE_URL} characters`)
    .regex(INVOICE_URL, 'must be an https:// URL')
    .optional(),
  /**
   * A leak reported by a public code host (gateway/leaks/): when, where it was found, the hashes of
   * the values reported (current or previous), and when they stopped working (`value_ended_at`,
   * when the leak policy ended them: those values are refused wherever the record is served, a
   * restored export or a keys file too). A roll clears all four. Written by the gateway; an export
   * carries them so a restore does not revive an ended value.
   */
  leaked_at: z.string().datetime({ offset: true, message: 'must be an RFC 3339 date-time with a time zone' }).optional(),
  leak_url: z.string().max(MAX_LEAK_URL, `must be at most ${MAX_LEAK_URL} characters`).optional(),
  value_ended_at: z.string().datetime({ offset: true, message: 'must be an RFC 3339 date-time with a time zone' }).optional(),
  leaked_key_sha256: z.array(z.string().regex(/^[0-9a-f]{64}$/, 'must be SHA-256 hashes as 64 lower-case hex characters')).min(1).max(2).optional(),
  /**
   * When the Redis store created and last changed the record: `keys export` writes them and `keys
   * import` restores them as written (an exact backup). A hand-written keys file leaves them out.
   */
  created_at: z.string().datetime({ offset: true, message: 'must be an RFC 3339 date-time with a time zone' }).optional(),
  updated_at: z.string().datetime({ offset: true, message: 'must be an RFC 3339 date-time with a time zone' }).optional(),
});

/**
 * Rotation in the keys file: the previous value's hash keeps working until the given time, so a
 * holder can move to a new value without downtime.
 */
export const RotationFields = z.object({
  previous_key_sha256: z.string().regex(SHA256_HEX, 'must be the SHA-256 of the previous key value as 64 hex characters').optional(),
  previous_key_expires_at: z.string().datetime({ offset: true, message: 'must be an ISO 8601 date-time, e.g. 2026-12-01T00:00:00Z' }).optional(),
});

/** One record of the YAML keys file (structure). */
export const KeyEntrySchema = KeyEntryFields.merge(RotationFields).strict();
export type KeyEntry = z.infer<typeof KeyEntrySchema>;

/** A record's address list, whichever way it was written (records stored before `addresses` have `address`). */
export const addressesOf = (entry: Pick<KeyEntry, 'address' | 'addresses'>): string[] => entry.addresses ?? (entry.address !== undefined ? [entry.address] : []);
