import type { AuditEntry, FieldChange } from '../audit/audit-entry';
import type { LeakMark } from '../console/pages/leak-notice';
import type { KeyView } from '../keys/key-admin';

/**
 * What a holder sees of a key: the fields listed here and nothing else (built field by field, so
 * an operator's `note`, a hash or any field added to KeyView later never reaches a holder's page).
 */
export interface HolderKey {
  readonly id: string;
  readonly tier: string;
  readonly countries: readonly string[];
  readonly addresses: readonly string[];
  readonly status: string;
  /** Why a paused key is paused: each reason once, sorted (absent unless paused). */
  readonly pauseReasons?: readonly string[];
  /** The open invoice of an unpaid renewal (https), linked while the key is paused for it. */
  readonly invoiceUrl?: string;
  readonly expiresAt?: string;
  readonly limits: { per_minute: number; per_day: number; per_month: number };
  readonly previousValidUntil?: string;
  /** A leak reported by a public code host, until a roll clears it. */
  readonly leak?: LeakMark;
  readonly createdAt: string;
  readonly updatedAt: string;
}

export function holderKey(k: KeyView): HolderKey {
  return {
    id: k.id,
    tier: k.tier,
    countries: [...k.countries],
    addresses: [...k.addresses],
    status: k.status,
    ...(k.pause_reasons?.length ? { pauseReasons: [...k.pause_reasons] } : {}),
    ...(k.billing_invoice_url && k.pause_reasons?.includes('unpaid_renewal') ? { invoiceUrl: k.billing_invoice_url } : {}),
    ...(k.expires_at ? { expiresAt: k.expires_at } : {}),
    limits: { per_minute: k.limits.per_minute, per_day: k.limits.per_day, per_month: k.limits.per_month },
    ...(k.previous_key_valid_until ? { previousValidUntil: k.previous_key_valid_until } : {}),
    ...(k.leaked_at ? { leak: { leakedAt: k.leaked_at, ...(k.leak_url ? { url: k.leak_url } : {}), ...(k.value_ended_at ? { valueEndedAt: k.value_ended_at } : {}) } } : {}),
    createdAt: k.created_at,
    updatedAt: k.updated_at,
  };
}

/** Why a key is paused, and what settles it, in the holder's words. */
export const PAUSE_EXPLANATIONS: Record<string, { why: string; settles: string }> = {
  unpaid_renewal: {
    why: 'the subscription\'s renewal is unpaid',
    settles: 'Paying the renewal settles it: the key works again, unchanged, as soon as the payment is recorded.',
  },
  payment_dispute: {
    why: 'a payment is disputed',
    settles: 'Resolving the dispute with billing settles it: the key then works again, unchanged.',
  },
  leaked: {
    why: 'the key\'s value was found in public (it leaked)',
    settles: 'Rolling the key settles it: a new value replaces the leaked one, which never works again. Nothing else resumes it.',
  },
  operator: {
    why: 'your provider paused it',
    settles: 'Your provider resumes it: contact them.',
  },
};

/** One change to a key as a holder sees it: when, by whom (you or the provider), what. */
export interface HolderChange {
  readonly time: string;
  readonly keyId: string;
  readonly by: string;
  readonly action: string;
  readonly changes: Readonly<Record<string, FieldChange>>;
}

const KEY_ACTIONS = new Set<string>(['create', 'import', 'change', 'pause', 'settle', 'revoke', 'roll', 'leak', 'file_add', 'file_change']);

/** Fields of an audit entry a holder never sees: the operator's note, and the account link. */
const HIDDEN_FIELDS = new Set(['note', 'account']);

/**
 * Audit entries as a holder's history: operators' notes dropped, an operator named only as "your
 * provider" (operator token names are internal), a holder shown by the identity they signed in with.
 */
export function holderChanges(entries: readonly AuditEntry[], accountId: string): HolderChange[] {
  const own = `holder:${accountId}:`;
  return entries.flatMap((e) => {
    // Requests have their own table; account entries are not about a key.
    if (!KEY_ACTIONS.has(e.action)) return [];
    const changes = Object.fromEntries(Object.entries(e.changes).filter(([name]) => !HIDDEN_FIELDS.has(name)));
    if (!Object.keys(changes).length && e.action !== 'roll' && e.action !== 'revoke') return [];
    const by = e.actor.startsWith(own)
      ? (e.actor.slice(own.length) === 'link' ? 'you (one-time link)' : `you (${e.actor.slice(own.length)})`)
      : e.channel === 'leaks' ? 'GitHub secret scanning' : 'your provider';
    return [{ time: e.time, keyId: e.key_id, by, action: e.action, changes }];
  });
}
