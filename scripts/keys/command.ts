import type { ParseArgsConfig } from 'node:util';
import type { RedisClient as Redis } from '../../gateway/redis/connect';
import { isLimitValue, MAX_LIMIT } from '../../gateway/config/gateway-config';
import type { KeyAdmin } from '../../gateway/keys/key-admin';

/** A mistake in the command line: printed as one line (and the command's usage), exit code 1. */
export class UsageError extends Error {
  constructor(message: string, readonly command?: string) {
    super(message);
    this.name = 'UsageError';
  }
}

export type OptionSpec = NonNullable<ParseArgsConfig['options']>[string] & {
  /** Shown in the command's help, after the option. */
  readonly help: string;
  /** Placeholder of the value in the help (string options), e.g. `N`. */
  readonly value?: string;
};

/** What a command is given when it runs. */
export interface CommandContext {
  /** The words after the command name. */
  readonly args: readonly string[];
  /** Its options, as parsed by node:util parseArgs (strings and booleans). */
  readonly options: Readonly<Record<string, string | boolean | undefined>>;
  /** The Redis key store's admin, connected on first use (from REDIS_URL); closed when the command ends. */
  keyAdmin(): Promise<KeyAdmin>;
  /** The same Redis connection, for other stores kept there (usage history). */
  redis(): Promise<Redis>;
  /** Writes to stdout. */
  out(text: string): void;
  /** Every command of the CLI (for commands about the CLI itself, such as completion). */
  readonly commands: readonly Command[];
  /** Reads stdin to its end. */
  stdin(): Promise<string>;
}

/**
 * One CLI command. Each lives in its own file under `commands/` and is listed once in
 * `commands/index.ts`: adding a command touches that table and nothing else. Help is built from
 * these fields, so `keys help CMD` and `keys CMD --help` work without Redis or any configuration.
 */
export interface Command {
  readonly name: string;
  /** The words after `keys NAME` in the synopsis, e.g. `ID --reason unpaid_renewal|payment_dispute`. */
  readonly synopsis: string;
  /** One line for `keys help`. */
  readonly summary: string;
  /** More help text (paragraphs), shown by `keys help NAME`. */
  readonly details?: string;
  readonly options?: Readonly<Record<string, OptionSpec>>;
  /** How many words after the name it takes: [min, max]. Default [0, 0]. */
  readonly positionals?: readonly [number, number];
  run(ctx: CommandContext): Promise<void>;
}

/** A whole number option (`--per-minute 120`), or undefined when not given. */
export function integerOption(ctx: CommandContext, name: string): number | undefined {
  const value = ctx.options[name];
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || !/^\d+$/.test(value)) throw new UsageError(`--${name} must be a whole number, got "${String(value).slice(0, 40)}"`);
  return Number(value);
}

export function stringOption(ctx: CommandContext, name: string): string | undefined {
  const value = ctx.options[name];
  return typeof value === 'string' ? value : undefined;
}

/**
 * Prints a new key value as docs/keys-and-accounts.md shows (create, roll, add): `lead` ("created key ID; its
 * value") and the warning on one line, then the value alone on the last line of stdout.
 */
export const printNewValue = (ctx: CommandContext, lead: string, value: string): void => ctx.out(`${lead} is shown once, on the next line:\n${value}\n`);

/** Prints a value as indented JSON. */
export const printJson = (ctx: CommandContext, value: unknown): void => ctx.out(`${JSON.stringify(value, null, 2)}\n`);

/** The record fields shared by create and set, as the admin API's snake_case body (limits as an object). */
export const RECORD_OPTIONS = {
  tier: { type: 'string', value: 'standard|advanced', help: 'the tier' },
  countries: { type: 'string', value: 'GB,FR', help: 'ISO 3166-1 alpha-2 codes, comma-separated' },
  addresses: { type: 'string', value: 'A,B', help: 'IPv4/IPv6 addresses or CIDR ranges the key may be used from, comma-separated, at most 16 ("any": every address)' },
  address: { type: 'string', value: 'ADDR', help: 'one address or range (the first release\'s option; same as --addresses with one entry)' },
  'expires-at': { type: 'string', value: 'TIME', help: 'RFC 3339 date-time from which the key is refused (401), e.g. 2027-01-31T00:00:00Z; with set, "none" removes it' },
  note: { type: 'string', value: 'TEXT', help: 'free text for operators, at most 500 characters, never shown to callers; with set, "" removes it' },
  account: { type: 'string', value: 'ID', help: 'the holder account the key belongs to (keys account create); with set, "" removes it' },
  'per-minute': { type: 'string', value: 'N', help: "overrides the tier's per-minute limit" },
  'per-day': { type: 'string', value: 'N', help: "overrides the tier's daily quota" },
  'per-month': { type: 'string', value: 'N', help: "overrides the tier's monthly quota" },
} as const satisfies Record<string, OptionSpec>;

/** The record options given, as an admin API body; `removable` (set): "none" / "" remove expires_at / note. */
export function recordFields(ctx: CommandContext, removable = false): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const tier = stringOption(ctx, 'tier');
  if (tier !== undefined) out.tier = tier;
  const countries = stringOption(ctx, 'countries');
  if (countries !== undefined) out.countries = countries.split(',').map((c) => c.trim()).filter(Boolean);
  const address = stringOption(ctx, 'address');
  if (address !== undefined) out.address = address;
  const addresses = stringOption(ctx, 'addresses');
  if (addresses !== undefined) out.addresses = addresses.split(',').map((a) => a.trim()).filter(Boolean);
  const expiresAt = stringOption(ctx, 'expires-at');
  if (expiresAt !== undefined) out.expires_at = expiresAt === 'none' && removable ? null : expiresAt;
  const note = stringOption(ctx, 'note');
  if (note !== undefined) out.note = note === '' && removable ? null : note;
  const account = stringOption(ctx, 'account');
  if (account !== undefined) out.account = account === '' && removable ? null : account;
  const limits: Record<string, number> = {};
  for (const name of ['per-minute', 'per-day', 'per-month'] as const) {
    const n = integerOption(ctx, name);
    // Bounded like every limit (gateway-config.ts); the store would refuse it too, in its own words.
    if (n !== undefined && !isLimitValue(n)) throw new UsageError(`--${name} must be a whole number from 1 to ${MAX_LIMIT}, got "${String(ctx.options[name]).slice(0, 40)}"`);
    if (n !== undefined) limits[name.replace('-', '_')] = n;
  }
  if (Object.keys(limits).length) out.limits = limits;
  return out;
}
