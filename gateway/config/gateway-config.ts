import { z } from 'zod';
import { readYamlFile } from './yaml-file';

export const LimitsSchema = z
  .object({
    per_minute: z.number().int().positive(),
    per_day: z.number().int().positive(),
    per_month: z.number().int().positive(),
  })
  .strict();

const GatewayConfigSchema = z
  .object({
    /** Default limits of each tier; a key's own `limits` override them field by field. */
    tiers: z
      .object({
        standard: LimitsSchema,
        advanced: LimitsSchema,
      })
      .strict(),
  })
  .strict();

export type TierName = 'standard' | 'advanced';
export interface Limits {
  readonly perMinute: number;
  readonly perDay: number;
  readonly perMonth: number;
}
export interface GatewayConfig {
  readonly tiers: Readonly<Record<TierName, Limits>>;
}

export const toLimits = (l: z.infer<typeof LimitsSchema>): Limits =>
  Object.freeze({ perMinute: l.per_minute, perDay: l.per_day, perMonth: l.per_month });

/** Reads the gateway configuration file (tier defaults). Throws a one-line `ConfigError`. */
export function loadGatewayConfig(file: string): GatewayConfig {
  const raw = readYamlFile(file, GatewayConfigSchema);
  return Object.freeze({
    tiers: Object.freeze({ standard: toLimits(raw.tiers.standard), advanced: toLimits(raw.tiers.advanced) }),
  });
}
