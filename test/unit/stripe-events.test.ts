/** What each Stripe event decides (gateway/billing/stripe-events.ts), before anything is read or written. */
import { DEFAULT_STRIPE_BILLING, toStripeBilling, type StripeBillingConfig } from '../../gateway/config/billing-config';
import { entitlementsOf, readEvent } from '../../gateway/billing/stripe-events';

const prices = (map: Record<string, { tier?: 'standard' | 'advanced'; countries?: string[] }>, extra: object = {}): StripeBillingConfig =>
  toStripeBilling({ stripe: { prices: map, ...extra } });
const sub = (status: string, keys: string[] = []) => ({ customer: 'cus_1', status, items: { data: keys.map((k) => ({ price: { lookup_key: k } })) } });

describe('subscriptions', () => {
  it.each([
    ['past_due', true], ['unpaid', true], ['active', false], ['trialing', false],
  ])('status %s decides unpaid_renewal = %s', (status, unpaid) => {
    const r = readEvent('customer.subscription.updated', sub(status), DEFAULT_STRIPE_BILLING);
    expect(r).toMatchObject({ use: true, subject: { customer: 'cus_1' } });
    expect(r.use && r.decisions.filter((d) => d.kind === 'unpaid')).toEqual([{ kind: 'unpaid', unpaid }]);
  });

  it('incomplete, canceled or paused decide nothing about unpaid_renewal', () => {
    for (const status of ['incomplete', 'canceled', 'paused']) {
      const r = readEvent('customer.subscription.updated', sub(status), DEFAULT_STRIPE_BILLING);
      expect(r.use && r.decisions.some((d) => d.kind === 'unpaid')).toBe(false);
    }
  });

  it('pause_when: unpaid waits through past_due and failed renewals', () => {
    const config = prices({}, { pause_when: 'unpaid' });
    const r = readEvent('customer.subscription.updated', sub('past_due'), config);
    expect(r.use && r.decisions.some((d) => d.kind === 'unpaid')).toBe(false);
    expect(readEvent('invoice.payment_failed', { customer: 'cus_1', billing_reason: 'subscription_cycle' }, config).use).toBe(false);
  });

  it('on_cancel: none ignores a deletion, pause holds unpaid_renewal, revoke revokes', () => {
    expect(readEvent('customer.subscription.deleted', sub('canceled'), DEFAULT_STRIPE_BILLING).use).toBe(false);
    expect(readEvent('customer.subscription.deleted', sub('canceled'), prices({}, { on_cancel: 'pause' }))).toMatchObject({ decisions: [{ kind: 'unpaid', unpaid: true }] });
    expect(readEvent('customer.subscription.deleted', sub('canceled'), prices({}, { on_cancel: 'revoke' }))).toMatchObject({ decisions: [{ kind: 'revoke' }] });
  });
});

describe('entitlements', () => {
  const map = prices({ gb: { countries: ['GB'] }, fr: { countries: ['FR', 'GB'] }, adv: { tier: 'advanced' }, std: { tier: 'standard' } });
  it('countries are the union of the items\' countries; tier the highest mapped', () => {
    expect(entitlementsOf(sub('active', ['gb', 'fr', 'std', 'adv', 'unknown']), map)).toEqual({ kind: 'entitlements', countries: ['FR', 'GB'], tier: 'advanced' });
  });
  it('no item mapping a country leaves countries unchanged; no item mapping a tier means standard when the map names tiers', () => {
    expect(entitlementsOf(sub('active', ['unknown']), map)).toEqual({ kind: 'entitlements', tier: 'standard' });
    expect(entitlementsOf(sub('active', ['gb']), prices({ gb: { countries: ['GB'] } }))).toEqual({ kind: 'entitlements', countries: ['GB'] });
  });
  it('a lookup_key named like an Object property maps nothing', () => {
    expect(entitlementsOf(sub('active', ['constructor', '__proto__', 'toString']), map)).toEqual({ kind: 'entitlements', tier: 'standard' });
  });
});

describe('invoices and disputes', () => {
  it('a failed renewal notes its https link; a failed first invoice decides nothing; a paid invoice settles', () => {
    expect(readEvent('invoice.payment_failed', { customer: 'cus_1', billing_reason: 'subscription_cycle', hosted_invoice_url: 'https://invoice.stripe.com/i/x' }, DEFAULT_STRIPE_BILLING))
      .toMatchObject({ decisions: [{ kind: 'unpaid', unpaid: true, invoiceUrl: 'https://invoice.stripe.com/i/x' }] });
    expect(readEvent('invoice.payment_failed', { customer: 'cus_1', billing_reason: 'subscription_cycle', hosted_invoice_url: 'javascript:alert(1)' }, DEFAULT_STRIPE_BILLING))
      .toMatchObject({ decisions: [{ kind: 'unpaid', unpaid: true }] });
    expect(readEvent('invoice.payment_failed', { customer: 'cus_1', billing_reason: 'subscription_create' }, DEFAULT_STRIPE_BILLING).use).toBe(false);
    expect(readEvent('invoice.paid', { customer: { id: 'cus_1' } }, DEFAULT_STRIPE_BILLING)).toMatchObject({ subject: { customer: 'cus_1' }, decisions: [{ kind: 'unpaid', unpaid: false }] });
  });
  it('a dispute names its charge; closed lost also decides an unpaid renewal', () => {
    expect(readEvent('charge.dispute.created', { id: 'dp_1', charge: 'ch_1', status: 'needs_response' }, DEFAULT_STRIPE_BILLING))
      .toEqual({ use: true, subject: { charge: 'ch_1' }, decisions: [{ kind: 'dispute', dispute: 'dp_1', open: true }] });
    expect(readEvent('charge.dispute.closed', { id: 'dp_1', charge: 'ch_1', status: 'lost' }, DEFAULT_STRIPE_BILLING))
      .toMatchObject({ decisions: [{ kind: 'dispute', dispute: 'dp_1', open: false }, { kind: 'unpaid', unpaid: true }] });
    expect(readEvent('charge.dispute.closed', { id: 'dp_1', charge: 'ch_1', status: 'warning_closed' }, DEFAULT_STRIPE_BILLING))
      .toMatchObject({ decisions: [{ kind: 'dispute', open: false }] });
  });
  it('an event type not used, or one without its subject, is ignored with why', () => {
    expect(readEvent('customer.created', { id: 'cus_1' }, DEFAULT_STRIPE_BILLING)).toEqual({ use: false, why: 'event type customer.created is not used' });
    expect(readEvent('invoice.paid', {}, DEFAULT_STRIPE_BILLING).use).toBe(false);
    expect(readEvent('charge.dispute.created', { id: 'dp_1' }, DEFAULT_STRIPE_BILLING).use).toBe(false);
  });
});
