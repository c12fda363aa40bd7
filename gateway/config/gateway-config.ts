import { z } from 'zod';
import { normaliseCountry } from '../validation/iso-countries';
import { BillingConfigSchema, toStripeBilling, type StripeBillingConfig } from './billing-config';
import { PortalConfigSchema, toSelfService, type SelfServicePolicy } from './portal-policy';
import { readYamlFile } from './yaml-file';

/**
 * The largest limit or quota: the largest integer a structured-field header can carry (RFC 8941:
 * 15 digits, for `RateLimit-Policy`'s `q=`), and well inside exact (safe-integer) arithmetic.
 */
export const MAX_LIMIT = 999_999_999_999_999;
const LIMIT_MESSAGE = `must be a whole number from 1 to ${MAX_LIMIT}`;
/** One limit or quota, wherever one is accepted (gateway config, keys file, admin API, CLI). */
export const LimitValueSchema = z
  .number({ invalid_type_error: LIMIT_MESSAGE })
  .int(LIMIT_MESSAGE)
  .min(1, LIMIT_MESSAGE)
  .max(MAX_LIMIT, LIMIT_MESSAGE);
/** True for a value LimitValueSchema accepts (fast path of the keys file). */
export const isLimitValue = (v: unknown): v is number => typeof v === 'number' && Number.isInteger(v) && v >= 1 && v <= MAX_LIMIT;

export const LimitsSchema = z
  .object({
    per_minute: LimitValueSchema,
    per_day: LimitValueSchema,
    per_month: LimitValueSchema,
  })
  .strict();

const httpUrl = z
  .string()
  .url()
  .refine((u) => /^https?:\/\//.test(u), 'must be an http:// or https:// URL');

const GatewayConfigSchema = z
  .object({
    /** Default limits of each tier; a key's own `limits` override them field by field. */
    tiers: z.object({ standard: LimitsSchema, advanced: LimitsSchema }).strict(),
    /**
     * Listing stores (data services). Absent: every country is served by BACKEND_URL. Present:
     * `countries` maps a country to its store, `default` serves the others; a country with neither
     * answers 503 `not_configured`.
     */
    stores: z
      .object({
        default: httpUrl.optional(),
        countries: z
          .record(z.string(), httpUrl)
          .default({})
          .superRefine((map, ctx) => {
            for (const code of Object.keys(map)) {
              if (normaliseCountry(code) !== code) ctx.addIssue({ code: z.ZodIssueCode.custom, path: [code], message: 'must be an upper-case ISO 3166-1 alpha-2 code' });
            }
          }),
      })
      .strict()
      .optional(),
    /**
     * The unauthenticated budget: refused authentications (401) one address may cause per UTC minute
     * before its requests are answered 429 `rate_limited` until the minute ends. Absent: the default
     * (DEFAULT_REFUSED_AUTH_PER_MINUTE); 0: off. `tracked_per_minute`: most addresses (and most
     * networks) charged per minute before the budget is charged by network, then shared
     * (limits/refused-auth-table.ts).
     */
    refused_authentication: z
      .object({
        per_address_per_minute: z.number().int('must be a whole number').min(0, 'must be 0 (off) or more').max(1_000_000, 'must be at most 1000000').optional(),
        tracked_per_minute: z.number().int('must be a whole number').min(1, 'must be 1 or more').max(10_000_000, 'must be at most 10000000').optional(),
      })
      .strict()
      .optional(),
    /** The insights area. Absent: `/v1/insights/*` answers 503 `not_configured` to Advanced keys. */
    insights: z.object({ upstream: httpUrl }).strict().optional(),
    /** Quota notifications (with WEBHOOK_URL): the percentages of a daily or monthly quota that send `quota.threshold`. */
    webhooks: z
      .object({
        quota_thresholds: z
          .array(z.number().int().min(1).max(100))
          .min(1)
          .max(10)
          .refine((list) => new Set(list).size === list.length, 'must not repeat a percentage'),
      })
      .strict()
      .optional(),
    /** The key holders' portal: `self_service` says what holders may change (portal-policy.ts). */
    portal: PortalConfigSchema.optional(),
    /** Payments moving keys (`billing.stripe`: billing-config.ts). */
    billing: BillingConfigSchema.optional(),
    /** Leaked keys reported by a public code host (gateway/leaks/): what a confirmed leak does. */
    leaks: z.object({ on_leak: z.enum(['end_value', 'pause', 'notify']).optional() }).strict().optional(),
  })
  .strict();

/**
 * What a confirmed leak does: `end_value` (the value reported stops working at once; the key waits
 * for a roll), `pause` (reason `leaked` until a roll), `notify` (only the mark, the audit entry and
 * the `key.leaked` event).
 */
export type LeakAction = 'end_value' | 'pause' | 'notify';

/** The thresholds when `webhooks.quota_thresholds` is not set. */
export const DEFAULT_QUOTA_THRESHOLDS: readonly number[] = Object.freeze([80, 90, 100]);

export type TierName = 'standard' | 'advanced';
export interface Limits {
  readonly perMinute: number;
  readonly perDay: number;
  readonly perMonth: number;
}
export interface StoreRoutes {
  /** Base URL for countries not listed; undefined: they are not configured. */
  readonly defaultUrl?: string;
  readonly byCountry: Readonly<Record<string, string>>;
}
/** Refused authentications per address and minute when the config says nothing. */
export const DEFAULT_REFUSED_AUTH_PER_MINUTE = 60;

export interface GatewayConfig {
  readonly tiers: Readonly<Record<TierName, Limits>>;
  /** The unauthenticated budget per address and UTC minute (0: off); absent: the default. */
  readonly refusedAuthPerMinute?: number;
  /** Most addresses (and networks) the budget charges per minute; absent: DEFAULT_REFUSED_AUTH_TRACKED. */
  readonly refusedAuthTracked?: number;
  readonly stores: StoreRoutes;
  readonly insightsUpstream?: string;
  /** Percentages of a quota that send `quota.threshold`, ascending (absent: DEFAULT_QUOTA_THRESHOLDS). */
  readonly quotaThresholds?: readonly number[];
  /** What key holders may change in the portal (defaults when the file has no `portal:`). */
  readonly selfService?: SelfServicePolicy;
  /** What Stripe's events do (defaults when the file has no `billing.stripe`). */
  readonly stripeBilling?: StripeBillingConfig;
  /** `leaks.on_leak` (absent: `end_value`). */
  readonly onLeak?: LeakAction;
}

export const toLimits = (l: z.infer<typeof LimitsSchema>): Limits =>
  Object.freeze({ perMinute: l.per_minute, perDay: l.per_day, perMonth: l.per_month });

/**
 * Reads the gateway configuration file. `backendUrl` (BACKEND_URL) serves every country when the
 * file has no `stores`. Throws a one-line `ConfigError`.
 */
export function loadGatewayConfig(file: string, backendUrl?: string): GatewayConfig {
  const raw = readYamlFile(file, GatewayConfigSchema);
  const stores: StoreRoutes = raw.stores
    ? { ...(raw.stores.default ? { defaultUrl: raw.stores.default } : {}), byCountry: Object.freeze({ ...raw.stores.countries }) }
    : { ...(backendUrl ? { defaultUrl: backendUrl } : {}), byCountry: {} };
  return Object.freeze({
    tiers: Object.freeze({ standard: toLimits(raw.tiers.standard), advanced: toLimits(raw.tiers.advanced) }),
    stores: Object.freeze(stores),
    refusedAuthPerMinute: raw.refused_authentication?.per_address_per_minute ?? DEFAULT_REFUSED_AUTH_PER_MINUTE,
    ...(raw.refused_authentication?.tracked_per_minute !== undefined ? { refusedAuthTracked: raw.refused_authentication.tracked_per_minute } : {}),
    ...(raw.insights ? { insightsUpstream: raw.insights.upstream } : {}),
    quotaThresholds: Object.freeze([...(raw.webhooks?.quota_thresholds ?? DEFAULT_QUOTA_THRESHOLDS)].sort((a, b) => a - b)),
    selfService: toSelfService(raw.portal),
    stripeBilling: toStripeBilling(raw.billing),
    onLeak: raw.leaks?.on_leak ?? 'end_value',
  });
}
