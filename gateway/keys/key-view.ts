import type { GatewayConfig } from '../config/gateway-config';
import { ANY_ADDRESS } from './address-list';
import { addressesOf } from './key-entry';
import { toKeyRecord } from './key-record-build';
import { heldReasons, reasonFields, type PauseReason } from './pause-reasons';
import type { StoredKey } from './redis-layout';

/** What operators see of a key: never a hash, never a value. */
export interface KeyView {
  id: string;
  tier: string;
  countries: string[];
  /** The addresses and CIDR ranges the key may be used from (`any`: every address). */
  addresses: string[];
  /** The first release's field, kept for readers of it: present when the list is one plain address. */
  address?: string;
  status: string;
  /** Why a paused key is paused: each reason once, sorted (absent unless paused). */
  pause_reasons?: PauseReason[];
  /** The first of `pause_reasons`, for readers of the first release's single reason. */
  pause_reason?: PauseReason;
  /** The open invoice of an unpaid renewal (https), when the billing integration noted one. */
  billing_invoice_url?: string;
  limits: { per_minute: number; per_day: number; per_month: number };
  limit_overrides?: Partial<{ per_minute: number; per_day: number; per_month: number }>;
  previous_key_valid_until?: string;
  expires_at?: string;
  note?: string;
  /** The holder account the key belongs to (gateway/accounts/). */
  account?: string;
  /** A leak reported by a public code host: when, where it was found, and (when the policy ended it) when the value stopped working. Cleared by a roll. */
  leaked_at?: string;
  leak_url?: string;
  value_ended_at?: string;
  created_at: string;
  updated_at: string;
}

export interface UsageView {
  id: string;
  windows: Array<{ window: 'minute' | 'day' | 'month'; used: number; limit: number; remaining: number; resets_at: string }>;
}

export interface KeyPage {
  keys: KeyView[];
  next_cursor: string | null;
}

/** The roll's grace end as operators see it, while it lasts. */
export const previousValidUntil = (s: StoredKey, nowMs = Date.now()): string | undefined =>
  s.previous_key_sha256 && (s.previous_expires_at ?? 0) > nowMs ? new Date(s.previous_expires_at!).toISOString() : undefined;

/** A stored record as operators see it, with the limits the gateway enforces for it under `config`. */
export function keyView(s: StoredKey, config: GatewayConfig): KeyView {
  const record = toKeyRecord(s, config);
  const addresses = addressesOf(s);
  const until = previousValidUntil(s);
  return {
    id: s.id,
    tier: s.tier,
    countries: s.countries,
    addresses,
    ...(addresses.length === 1 && !addresses[0]!.includes('/') && addresses[0] !== ANY_ADDRESS ? { address: addresses[0] } : {}),
    status: s.status,
    ...reasonFields(heldReasons(s)),
    ...(s.billing_invoice_url !== undefined ? { billing_invoice_url: s.billing_invoice_url } : {}),
    limits: { per_minute: record.limits.perMinute, per_day: record.limits.perDay, per_month: record.limits.perMonth },
    ...(s.limits && Object.keys(s.limits).length ? { limit_overrides: s.limits } : {}),
    ...(until !== undefined ? { previous_key_valid_until: until } : {}),
    ...(s.expires_at !== undefined ? { expires_at: s.expires_at } : {}),
    ...(s.note !== undefined ? { note: s.note } : {}),
    ...(s.account !== undefined ? { account: s.account } : {}),
    ...(s.leaked_at !== undefined ? { leaked_at: s.leaked_at } : {}),
    ...(s.leak_url !== undefined ? { leak_url: s.leak_url } : {}),
    ...(s.value_ended_at !== undefined ? { value_ended_at: s.value_ended_at } : {}),
    created_at: s.created_at,
    updated_at: s.updated_at,
  };
}

/** A record's fields for an event: what operators see (no hash, no value), under `key_id`. */
export function eventFields(view: KeyView): Record<string, unknown> {
  const { id, created_at: _c, updated_at: _u, ...fields } = view;
  return { key_id: id, ...fields };
}
