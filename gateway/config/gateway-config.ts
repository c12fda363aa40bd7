import { z } from 'zod';
import { normaliseCountry } from '../validation/iso-countries';
import { readYamlFile } from './yaml-file';

export const LimitsSchema = z
  .object({
    per_minute: z.number().int().positive(),
    per_day: z.number().int().positive(),
    per_month: z.number().int().positive(),
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
  })
  .strict();

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
export interface GatewayConfig {
  readonly tiers: Readonly<Record<TierName, Limits>>;
  readonly stores: StoreRoutes;
  readonly insightsUpstream?: string;
  /** Percentages of a quota that send `quota.threshold`, ascending (absent: DEFAULT_QUOTA_THRESHOLDS). */
  readonly quotaThresholds?: readonly number[];
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
    ...(raw.insights ? { insightsUpstream: raw.insights.upstream } : {}),
    quotaThresholds: Object.freeze([...(raw.webhooks?.quota_thresholds ?? DEFAULT_QUOTA_THRESHOLDS)].sort((a, b) => a - b)),
  });
}
