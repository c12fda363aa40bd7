import { isLimitValue } from '../config/gateway-config';
import { INVOICE_URL, KEY_ID, SHA256_HEX, type KeyEntry } from './key-entry';
import { isPauseReason, PAUSE_REASONS } from './pause-reasons';
import { MAX_ADDRESSES, MAX_COUNTRIES, MAX_INVOICE_URL, MAX_NOTE } from './record-bounds';

/**
 * The fields this check knows how to judge. Any other field (one the schema gained later, or a
 * stranger) makes it answer "unsure", so the schema decides: adding a field to the schema can never
 * let it through unchecked here.
 */
const FAST_FIELDS = new Set([
  'id', 'key_sha256', 'tier', 'countries', 'address', 'addresses', 'status', 'pause_reason', 'pause_reasons', 'limits', 'note', 'account', 'previous_key_sha256', 'billing_invoice_url',
]);
const LIMIT_FIELDS = new Set(['per_minute', 'per_day', 'per_month']);
const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

const isStringList = (v: unknown, max: number): boolean => {
  if (!Array.isArray(v) || v.length === 0 || v.length > max) return false;
  for (const item of v) if (typeof item !== 'string') return false;
  return true;
};

/**
 * True only for an entry `KeyEntrySchema` accepts as it is; false when unsure (the schema then
 * decides, and words the error). zod costs ~4.5 µs per entry plus the garbage of its copy: about
 * half the start-up time of a 100,000-key file. A test holds this check to the schema (property).
 */
export function isWellFormedKeyEntry(e: unknown): e is KeyEntry {
  if (!isRecord(e)) return false;
  for (const field in e) if (!FAST_FIELDS.has(field)) return false; // expires_at, previous_key_expires_at: the schema's date-time rule decides
  if (typeof e.id !== 'string' || !KEY_ID.test(e.id)) return false;
  if (typeof e.key_sha256 !== 'string' || !SHA256_HEX.test(e.key_sha256)) return false;
  if (e.tier !== 'standard' && e.tier !== 'advanced') return false;
  if (!isStringList(e.countries, MAX_COUNTRIES)) return false;
  if ('address' in e && typeof e.address !== 'string') return false;
  if ('addresses' in e && !isStringList(e.addresses, MAX_ADDRESSES)) return false;
  if ('note' in e && (typeof e.note !== 'string' || e.note.length > MAX_NOTE)) return false;
  if ('account' in e && (typeof e.account !== 'string' || !KEY_ID.test(e.account))) return false;
  if (e.status !== 'active' && e.status !== 'paused' && e.status !== 'revoked') return false;
  if ('pause_reason' in e && !isPauseReason(e.pause_reason)) return false;
  if ('pause_reasons' in e && (!Array.isArray(e.pause_reasons) || e.pause_reasons.length > PAUSE_REASONS.length || !e.pause_reasons.every(isPauseReason))) return false;
  if ('billing_invoice_url' in e && (typeof e.billing_invoice_url !== 'string' || e.billing_invoice_url.length > MAX_INVOICE_URL || !INVOICE_URL.test(e.billing_invoice_url))) return false;
  if ('limits' in e) {
    if (!isRecord(e.limits)) return false;
    for (const field in e.limits) if (!LIMIT_FIELDS.has(field) || !isLimitValue(e.limits[field])) return false;
  }
  if ('previous_key_sha256' in e && (typeof e.previous_key_sha256 !== 'string' || !SHA256_HEX.test(e.previous_key_sha256))) return false;
  return true;
}

/** A keys file's shape (`keys:` and a list of entries), checked fast (see isWellFormedKeyEntry). */
export function isWellFormedKeysFile(raw: unknown): boolean {
  if (!isRecord(raw) || !Array.isArray(raw.keys)) return false;
  for (const field in raw) if (field !== 'keys' && !(field === 'accounts' && Array.isArray(raw.accounts))) return false;
  for (const entry of raw.keys) if (!isWellFormedKeyEntry(entry)) return false;
  return true;
}
