import { z } from 'zod';
import { normaliseCountry } from '../validation/iso-countries';

export type BillingTier = 'standard' | 'advanced';

/** What one Stripe price (by its `lookup_key`) gives a subscription's keys. */
export interface PriceEntitlement {
  readonly tier?: BillingTier;
  readonly countries?: readonly string[];
}

/**
 * `billing.stripe` of the gateway YAML: when a subscription's status pauses keys (`past_due`:
 * past_due or unpaid, and a failed renewal invoice; `unpaid`: only once Stripe gives up), what its
 * prices give, and what a cancelled subscription does.
 */
export interface StripeBillingConfig {
  readonly pauseWhen: 'past_due' | 'unpaid';
  readonly prices: Readonly<Record<string, PriceEntitlement>>;
  readonly onCancel: 'none' | 'pause' | 'revoke';
}

export const DEFAULT_STRIPE_BILLING: StripeBillingConfig = Object.freeze({ pauseWhen: 'past_due', prices: Object.freeze({}), onCancel: 'none' });

const country = z.string().superRefine((v, ctx) => {
  if (normaliseCountry(v) !== v) ctx.addIssue({ code: z.ZodIssueCode.custom, message: 'must be an upper-case ISO 3166-1 alpha-2 code' });
});

const PriceSchema = z
  .object({
    tier: z.enum(['standard', 'advanced'], { errorMap: () => ({ message: 'must be standard or advanced' }) }).optional(),
    countries: z.array(country).min(1, 'must list at least one country').optional(),
  })
  .strict()
  .refine((p) => p.tier !== undefined || p.countries !== undefined, 'must give a tier, countries, or both');

/** The `billing:` section of the gateway YAML. */
export const BillingConfigSchema = z
  .object({
    stripe: z
      .object({
        pause_when: z.enum(['past_due', 'unpaid'], { errorMap: () => ({ message: 'must be past_due or unpaid' }) }).optional(),
        /** A price's `lookup_key` → what it gives. */
        prices: z.record(z.string().min(1).max(200), PriceSchema).optional(),
        on_cancel: z.enum(['none', 'pause', 'revoke'], { errorMap: () => ({ message: 'must be none, pause or revoke' }) }).optional(),
      })
      .strict()
      .optional(),
  })
  .strict();

export function toStripeBilling(raw: z.infer<typeof BillingConfigSchema> | undefined): StripeBillingConfig {
  const s = raw?.stripe;
  if (!s) return DEFAULT_STRIPE_BILLING;
  const prices = Object.fromEntries(Object.entries(s.prices ?? {}).map(([k, p]) => [k, Object.freeze({ ...(p.tier ? { tier: p.tier } : {}), ...(p.countries ? { countries: Object.freeze([...new Set(p.countries)]) } : {}) })]));
  return Object.freeze({ pauseWhen: s.pause_when ?? 'past_due', prices: Object.freeze(prices), onCancel: s.on_cancel ?? 'none' });
}
