import { z } from 'zod';

/** How a holder's change of countries or tier is handled: not offered, recorded for an operator, or applied at once. */
export type ChangeMode = 'off' | 'request' | 'direct';

/** `portal.self_service` of the gateway YAML (docs/portal.md): what a key holder may change in the portal. */
export interface SelfServicePolicy {
  readonly addresses: boolean;
  readonly allowAnyAddress: boolean;
  readonly roll: boolean;
  readonly rollGraceSeconds: number;
  readonly revoke: boolean;
  readonly countries: ChangeMode;
  readonly tier: ChangeMode;
  /** Changes one account may make in a UTC minute (portal/change-budget.ts). */
  readonly changesPerMinute: number;
}

export const DEFAULT_SELF_SERVICE: SelfServicePolicy = Object.freeze({
  addresses: true,
  allowAnyAddress: false,
  roll: true,
  rollGraceSeconds: 3600,
  revoke: true,
  countries: 'request',
  tier: 'request',
  changesPerMinute: 30,
});

const mode = z.enum(['off', 'request', 'direct'], { errorMap: () => ({ message: 'must be off, request or direct' }) });

/** The `portal:` section of the gateway YAML. */
export const PortalConfigSchema = z
  .object({
    self_service: z
      .object({
        addresses: z.boolean().optional(),
        allow_any_address: z.boolean().optional(),
        roll: z.boolean().optional(),
        /** The previous value keeps working this long after a holder's roll (at most 7 days). */
        roll_grace_seconds: z.number().int('must be a whole number').min(0, 'must be 0 or more').max(604_800, 'must be at most 604800 (7 days)').optional(),
        revoke: z.boolean().optional(),
        countries: mode.optional(),
        tier: mode.optional(),
        /** Changes one account may make in the portal in a UTC minute; more answer 429 until the minute ends. */
        changes_per_minute: z.number().int('must be a whole number').min(1, 'must be 1 or more').max(10_000, 'must be at most 10000').optional(),
      })
      .strict()
      .optional(),
  })
  .strict();

export function toSelfService(raw: z.infer<typeof PortalConfigSchema> | undefined): SelfServicePolicy {
  const s = raw?.self_service ?? {};
  return Object.freeze({
    addresses: s.addresses ?? DEFAULT_SELF_SERVICE.addresses,
    allowAnyAddress: s.allow_any_address ?? DEFAULT_SELF_SERVICE.allowAnyAddress,
    roll: s.roll ?? DEFAULT_SELF_SERVICE.roll,
    rollGraceSeconds: s.roll_grace_seconds ?? DEFAULT_SELF_SERVICE.rollGraceSeconds,
    revoke: s.revoke ?? DEFAULT_SELF_SERVICE.revoke,
    countries: s.countries ?? DEFAULT_SELF_SERVICE.countries,
    tier: s.tier ?? DEFAULT_SELF_SERVICE.tier,
    changesPerMinute: s.changes_per_minute ?? DEFAULT_SELF_SERVICE.changesPerMinute,
  });
}
