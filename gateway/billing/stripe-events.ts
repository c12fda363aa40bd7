import type { BillingTier, StripeBillingConfig } from '../config/billing-config';

/**
 * What one Stripe event decides, before anything is read or written (pure). Each decision is kept
 * per account with the event's `created`, so the latest event decides (billing-state.ts):
 * - `unpaid`: whether the account's keys hold `unpaid_renewal` (with the open invoice's link);
 * - `dispute`: whether this one dispute is open (`payment_dispute` is held while any is);
 * - `entitlements`: the countries and tier the subscription's prices give;
 * - `revoke`: the subscription ended and `on_cancel: revoke` says its keys end too.
 */
export type Decision =
  | { readonly kind: 'unpaid'; readonly unpaid: boolean; readonly invoiceUrl?: string }
  | { readonly kind: 'dispute'; readonly dispute: string; readonly open: boolean }
  | { readonly kind: 'entitlements'; readonly countries?: readonly string[]; readonly tier?: BillingTier }
  | { readonly kind: 'revoke' };

/** Who the event is about: a customer named by the object, or a charge whose customer must be read. */
export type Subject = { readonly customer: string } | { readonly charge: string };

export type Reading =
  | { readonly use: true; readonly subject: Subject; readonly decisions: readonly Decision[] }
  | { readonly use: false; readonly why: string };

type Obj = Record<string, unknown>;
const str = (v: unknown): string | undefined => (typeof v === 'string' && v.length > 0 ? v : undefined);
/** Stripe names a related object by id, or (expanded) as the object with its `id`. */
const idOf = (v: unknown): string | undefined => str(v) ?? (v && typeof v === 'object' ? str((v as Obj).id) : undefined);
const ignored = (why: string): Reading => ({ use: false, why });

/** The countries and tier a subscription's items map to (`billing.stripe.prices`). */
export function entitlementsOf(subscription: Obj, config: StripeBillingConfig): Decision {
  const items = ((subscription.items as Obj | undefined)?.data as unknown[] | undefined) ?? [];
  const countries = new Set<string>();
  let tier: BillingTier | undefined;
  for (const item of items) {
    const key = str(((item as Obj | undefined)?.price as Obj | undefined)?.lookup_key);
    const mapped = key !== undefined && Object.hasOwn(config.prices, key) ? config.prices[key] : undefined;
    if (!mapped) continue;
    for (const c of mapped.countries ?? []) countries.add(c);
    if (mapped.tier === 'advanced' || (mapped.tier === 'standard' && tier === undefined)) tier = mapped.tier;
  }
  const namesTier = Object.values(config.prices).some((p) => p.tier !== undefined);
  return {
    kind: 'entitlements',
    ...(countries.size ? { countries: [...countries].sort() } : {}),
    ...(tier ? { tier } : namesTier ? { tier: 'standard' as const } : {}),
  };
}

function subscriptionEvent(type: string, o: Obj, config: StripeBillingConfig): Decision[] | string {
  if (type === 'customer.subscription.deleted') {
    if (config.onCancel === 'pause') return [{ kind: 'unpaid', unpaid: true }];
    if (config.onCancel === 'revoke') return [{ kind: 'revoke' }];
    return 'subscription cancelled (billing.stripe.on_cancel: none)';
  }
  const status = str(o.status);
  const decisions: Decision[] = [entitlementsOf(o, config)];
  const pauses = config.pauseWhen === 'unpaid' ? ['unpaid'] : ['past_due', 'unpaid'];
  if (status && pauses.includes(status)) decisions.push({ kind: 'unpaid', unpaid: true });
  else if (status === 'active' || status === 'trialing') decisions.push({ kind: 'unpaid', unpaid: false });
  return decisions;
}

function invoiceEvent(type: string, o: Obj, config: StripeBillingConfig): Decision[] | string {
  if (type === 'invoice.paid') return [{ kind: 'unpaid', unpaid: false }];
  if (str(o.billing_reason) !== 'subscription_cycle') return `invoice.payment_failed for billing_reason ${str(o.billing_reason) ?? 'none'} (only renewals pause)`;
  if (config.pauseWhen === 'unpaid') return 'renewal invoice failed (billing.stripe.pause_when: unpaid waits for the subscription)';
  const url = str(o.hosted_invoice_url);
  return [{ kind: 'unpaid', unpaid: true, ...(url && /^https:\/\//.test(url) ? { invoiceUrl: url } : {}) }];
}

function disputeEvent(type: string, o: Obj): Decision[] | string {
  const dispute = str(o.id);
  if (!dispute) return 'dispute without an id';
  if (type === 'charge.dispute.created') return [{ kind: 'dispute', dispute, open: true }];
  const status = str(o.status);
  if (status === 'won' || status === 'warning_closed') return [{ kind: 'dispute', dispute, open: false }];
  // Lost: the payment was taken back, so the renewal counts as unpaid.
  if (status === 'lost') return [{ kind: 'dispute', dispute, open: false }, { kind: 'unpaid', unpaid: true }];
  return `dispute closed with status ${status ?? 'none'}`;
}

export const USED_EVENT_TYPES = [
  'customer.subscription.created', 'customer.subscription.updated', 'customer.subscription.deleted',
  'invoice.paid', 'invoice.payment_failed', 'charge.dispute.created', 'charge.dispute.closed',
] as const;

/** What the event decides and about whom; an event type not used, or one missing its subject, is ignored (with why). */
export function readEvent(type: string, object: unknown, config: StripeBillingConfig): Reading {
  if (!(USED_EVENT_TYPES as readonly string[]).includes(type)) return ignored(`event type ${type} is not used`);
  if (!object || typeof object !== 'object') return ignored('event without data.object');
  const o = object as Obj;
  if (type.startsWith('charge.dispute.')) {
    const charge = idOf(o.charge);
    if (!charge) return ignored('dispute without a charge');
    const decisions = disputeEvent(type, o);
    return typeof decisions === 'string' ? ignored(decisions) : { use: true, subject: { charge }, decisions };
  }
  const customer = idOf(o.customer);
  if (!customer) return ignored(`${type} without a customer`);
  const decisions = type.startsWith('invoice.') ? invoiceEvent(type, o, config) : subscriptionEvent(type, o, config);
  return typeof decisions === 'string' ? ignored(decisions) : { use: true, subject: { customer }, decisions };
}
