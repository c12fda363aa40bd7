import { z } from 'zod';
import { LimitsSchema, toLimits, type GatewayConfig } from '../config/gateway-config';
import { readYamlFile } from '../config/yaml-file';
import { formatIssuePath } from '../config/config-error';
import { ConfigError } from '../config/config-error';
import { normaliseCountry } from '../validation/iso-countries';
import { normaliseAddress } from './address';
import type { KeyRecord } from './key-record';

/** The fields of a key record, exactly as CONTRACT part 3 names them (the Redis store adds its own). */
export const KeyEntryFields = z.object({
    id: z.string().regex(/^[A-Za-z0-9._-]{1,64}$/, 'must be 1 to 64 characters of A-Z a-z 0-9 . _ -'),
    key_sha256: z
      .string()
      .regex(/^[0-9a-fA-F]{64}$/, 'must be the SHA-256 of the key value as 64 hex characters')
      .transform((v) => v.toLowerCase()),
    tier: z.enum(['standard', 'advanced']),
    countries: z
      .array(
        z.string().transform((c, ctx) => {
          const code = normaliseCountry(c);
          if (!code) ctx.addIssue({ code: z.ZodIssueCode.custom, message: `"${c}" is not an ISO 3166-1 alpha-2 code` });
          return code ?? c;
        }),
      )
      .min(1, 'must list at least one country'),
    address: z.string().transform((a, ctx) => {
      const normalised = normaliseAddress(a);
      if (!normalised) ctx.addIssue({ code: z.ZodIssueCode.custom, message: `"${a}" is not an IPv4 or IPv6 address` });
      return normalised ?? a;
    }),
    status: z.enum(['active', 'paused', 'revoked']),
    pause_reason: z.enum(['unpaid_renewal', 'payment_dispute']).optional(),
    limits: LimitsSchema.partial().strict().optional(),
  });

/**
 * Rotation in the keys file: the previous value's hash keeps working until the given time, so a
 * holder can move to a new value without downtime.
 */
const RotationFields = z.object({
  previous_key_sha256: z
    .string()
    .regex(/^[0-9a-fA-F]{64}$/, 'must be the SHA-256 of the previous key value as 64 hex characters')
    .transform((v) => v.toLowerCase())
    .optional(),
  previous_key_expires_at: z.string().datetime({ offset: true, message: 'must be an ISO 8601 date-time, e.g. 2026-12-01T00:00:00Z' }).optional(),
});

const pausedHasReason = <T extends { status: string; pause_reason?: string }>(schema: z.ZodType<T>) =>
  schema.refine((k) => k.status !== 'paused' || k.pause_reason !== undefined, {
    message: 'is required when status is paused (unpaid_renewal or payment_dispute)',
    path: ['pause_reason'],
  });

/** One record of the YAML keys file. */
export const KeyEntrySchema = pausedHasReason(KeyEntryFields.merge(RotationFields).strict()).refine(
  (k) => (k.previous_key_sha256 === undefined) === (k.previous_key_expires_at === undefined),
  { message: 'previous_key_sha256 and previous_key_expires_at go together', path: ['previous_key_expires_at'] },
);

export type KeyEntry = z.infer<typeof KeyEntrySchema>;

const KeysFileSchema = z.object({ keys: z.array(KeyEntrySchema) }).strict();

function describeEntry(raw: unknown, path: ReadonlyArray<string | number>): string {
  const [top, index, ...field] = path;
  if (top !== 'keys' || typeof index !== 'number') return formatIssuePath(path);
  const id = (raw as { keys?: Array<{ id?: unknown }> }).keys?.[index]?.id;
  const entry = `keys[${index}]${typeof id === 'string' ? ` (id ${id})` : ''}`;
  return field.length ? `${entry}: field "${formatIssuePath(field)}"` : entry;
}

/** Turns a validated entry into the record the gateway uses, applying the tier's default limits. */
export function toKeyRecord(entry: KeyEntry, config: GatewayConfig): KeyRecord {
  const tierLimits = config.tiers[entry.tier];
  return Object.freeze({
    id: entry.id,
    keySha256: entry.key_sha256,
    tier: entry.tier,
    countries: new Set(entry.countries),
    address: entry.address,
    status: entry.status,
    ...(entry.pause_reason ? { pauseReason: entry.pause_reason } : {}),
    limits: toLimits({
      per_minute: entry.limits?.per_minute ?? tierLimits.perMinute,
      per_day: entry.limits?.per_day ?? tierLimits.perDay,
      per_month: entry.limits?.per_month ?? tierLimits.perMonth,
    }),
  });
}

/** Reads and validates the entries of a keys file; duplicate ids or hashes are refused. Throws a one-line `ConfigError`. */
export function readKeysFile(file: string): KeyEntry[] {
  const { keys } = readYamlFile(file, KeysFileSchema, describeEntry);
  const ids = new Set<string>();
  const hashes = new Set<string>();
  return keys.map((entry, index) => {
    if (ids.has(entry.id)) throw new ConfigError(`${file}: keys[${index}] (id ${entry.id}): field "id": duplicate id`);
    if (hashes.has(entry.key_sha256)) {
      throw new ConfigError(`${file}: keys[${index}] (id ${entry.id}): field "key_sha256": the same hash is already used by another key`);
    }
    if (entry.previous_key_sha256 !== undefined && hashes.has(entry.previous_key_sha256)) {
      throw new ConfigError(`${file}: keys[${index}] (id ${entry.id}): field "previous_key_sha256": the same hash is already used by another key`);
    }
    ids.add(entry.id);
    hashes.add(entry.key_sha256);
    if (entry.previous_key_sha256 !== undefined) hashes.add(entry.previous_key_sha256);
    return entry;
  });
}

/** A record and, during a rotation, the previous hash that still authenticates until `expiresAt` (ms). */
export interface FileKey {
  readonly record: KeyRecord;
  readonly previous?: { readonly keySha256: string; readonly expiresAt: number };
}

/** The keys file as the records the gateway uses. */
export const loadKeysFile = (file: string, config: GatewayConfig): FileKey[] =>
  readKeysFile(file).map((entry) => ({
    record: toKeyRecord(entry, config),
    ...(entry.previous_key_sha256 && entry.previous_key_expires_at
      ? { previous: { keySha256: entry.previous_key_sha256, expiresAt: Date.parse(entry.previous_key_expires_at) } }
      : {}),
  }));
