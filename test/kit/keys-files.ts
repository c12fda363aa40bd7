/**
 * The files a gateway reads, written to temp directories: keys files (SHA-256 of each value, never
 * a value), gateway configs (tier defaults, unauthenticated budget), listings files; and the key
 * values and secrets the tests send.
 */
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import { crc32 } from 'node:zlib';
import { stringify } from 'yaml';
import { makeTempDir, writeTempFile } from './temp-files';

export type Tier = 'standard' | 'advanced';

export interface KeySpec {
  id: string;
  /** The key value the client sends; only its SHA-256 goes into the file. */
  value: string;
  tier: Tier;
  countries: string[];
  /** One address (the first release's field); or `addresses`. */
  address?: string;
  addresses?: string[];
  status: 'active' | 'paused' | 'revoked';
  pause_reason?: 'unpaid_renewal' | 'payment_dispute';
  limits?: { per_minute?: number; per_day?: number; per_month?: number };
  expires_at?: string;
  note?: string;
}

/** Values shorter than this (e.g. a 1-character imported key) are too common to search for in text. */
export const MIN_SEARCHABLE_SECRET = 12;

/** Limits no test reaches: for keys whose tests are about something else than limits. */
export const UNLIMITED = Object.freeze({ per_minute: 1_000_000, per_day: 10_000_000, per_month: 100_000_000 });

export const sha256Hex = (value: string): string => createHash('sha256').update(value).digest('hex');

/** An "imported" key value (no project prefix): any format authenticates by its hash. */
export const randomKeyValue = (label = 'key'): string => `it-${label}-${randomBytes(18).toString('base64url')}`;

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
function base62(value: bigint, width: number): string {
  let out = '';
  for (let i = 0; i < width; i++) {
    out = BASE62[Number(value % 62n)]! + out;
    value /= 62n;
  }
  return out;
}

/**
 * A key value in the project's generated format, computed independently of the gateway's code:
 * `plk_` + 43 base62 characters of 32 random bytes + 6 base62 characters of the CRC-32 of those 43.
 */
export function plkKeyValue(): string {
  const body = base62(BigInt(`0x${randomBytes(32).toString('hex')}`), 43);
  return `plk_${body}${base62(BigInt(crc32(body)), 6)}`;
}

/** The same value with its last checksum character changed: a `plk_` value whose checksum is wrong. */
export function withBadChecksum(value: string): string {
  const last = value[value.length - 1]!;
  const replacement = BASE62[(BASE62.indexOf(last) + 1) % 62]!;
  return value.slice(0, -1) + replacement;
}

export function keysFileText(keys: readonly KeySpec[]): string {
  const records = keys.map((k) => {
    const record: Record<string, unknown> = {
      id: k.id,
      key_sha256: sha256Hex(k.value),
      tier: k.tier,
      countries: k.countries,
      ...(k.address !== undefined ? { address: k.address } : {}),
      ...(k.addresses !== undefined ? { addresses: k.addresses } : {}),
      status: k.status,
    };
    if (k.pause_reason) record.pause_reason = k.pause_reason;
    if (k.limits) record.limits = k.limits;
    if (k.expires_at !== undefined) record.expires_at = k.expires_at;
    if (k.note !== undefined) record.note = k.note;
    return record;
  });
  return stringify({ keys: records });
}

/** Writes a temp keys file (hashes only) and returns its path. */
export function writeKeysFile(keys: readonly KeySpec[], dir = makeTempDir()): string {
  const file = writeTempFile('keys.yaml', keysFileText(keys), dir);
  const text = fs.readFileSync(file, 'utf8');
  for (const k of keys) {
    if (k.value.length >= MIN_SEARCHABLE_SECRET && text.includes(k.value)) throw new Error(`kit bug: key value of ${k.id} written to the keys file`);
  }
  return file;
}

export interface TierLimits {
  per_minute: number;
  per_day: number;
  per_month: number;
}

export const DEFAULT_TIERS: Record<Tier, TierLimits> = {
  standard: { per_minute: 1000, per_day: 100_000, per_month: 1_000_000 },
  advanced: { per_minute: 1000, per_day: 100_000, per_month: 1_000_000 },
};

/**
 * The unauthenticated budget of the kit's gateways: the suites send floods of unknown keys from
 * one address on purpose, and expect 401s; the budget's own suite sets a small one.
 */
export const KIT_REFUSED_AUTH_PER_MINUTE = 1_000_000;

/** Writes a temp gateway config (tier defaults) and returns its path. */
export function writeGatewayConfig(tiers: Record<Tier, TierLimits> = DEFAULT_TIERS, dir = makeTempDir(), refusedAuthPerMinute = KIT_REFUSED_AUTH_PER_MINUTE): string {
  return writeTempFile('gateway.yaml', stringify({ tiers, refused_authentication: { per_address_per_minute: refusedAuthPerMinute } }), dir);
}

/** Writes listings as a JSON array (or NDJSON) and returns the path. */
export function writeListingsFile(listings: readonly unknown[], format: 'json' | 'ndjson' = 'json', dir = makeTempDir()): string {
  const text = format === 'json' ? JSON.stringify(listings) : listings.map((l) => JSON.stringify(l)).join('\n') + '\n';
  return writeTempFile(format === 'json' ? 'listings.json' : 'listings.ndjson', text, dir);
}

/** The kit gateways' INSIGHTS_IDENTITY_SECRET (required when a suite configures insights). */
export const KIT_INSIGHTS_SECRET = randomBytes(32).toString('base64url');

/** base64url of 32 random bytes: a valid CURSOR_SECRET. */
export const cursorSecret = (): string => randomBytes(32).toString('base64url');
