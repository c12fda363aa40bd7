import type { ParseArgsConfig } from 'node:util';
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
  /** Writes to stdout. */
  out(text: string): void;
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
  if (typeof value !== 'string' || !/^\d{1,15}$/.test(value)) throw new UsageError(`--${name} must be a whole number, got "${String(value)}"`);
  return Number(value);
}

export function stringOption(ctx: CommandContext, name: string): string | undefined {
  const value = ctx.options[name];
  return typeof value === 'string' ? value : undefined;
}

/** Prints a value as indented JSON. */
export const printJson = (ctx: CommandContext, value: unknown): void => ctx.out(`${JSON.stringify(value, null, 2)}\n`);

/** The record fields shared by create and set, as the admin API's snake_case body (limits as an object). */
export const RECORD_OPTIONS = {
  tier: { type: 'string', value: 'standard|advanced', help: 'the tier' },
  countries: { type: 'string', value: 'GB,FR', help: 'ISO 3166-1 alpha-2 codes, comma-separated' },
  address: { type: 'string', value: 'ADDR', help: 'the one IPv4 or IPv6 address the key may be used from' },
  'per-minute': { type: 'string', value: 'N', help: "overrides the tier's per-minute limit" },
  'per-day': { type: 'string', value: 'N', help: "overrides the tier's daily quota" },
  'per-month': { type: 'string', value: 'N', help: "overrides the tier's monthly quota" },
} as const satisfies Record<string, OptionSpec>;

export function recordFields(ctx: CommandContext): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const tier = stringOption(ctx, 'tier');
  if (tier !== undefined) out.tier = tier;
  const countries = stringOption(ctx, 'countries');
  if (countries !== undefined) out.countries = countries.split(',').map((c) => c.trim()).filter(Boolean);
  const address = stringOption(ctx, 'address');
  if (address !== undefined) out.address = address;
  const limits: Record<string, number> = {};
  for (const name of ['per-minute', 'per-day', 'per-month'] as const) {
    const n = integerOption(ctx, name);
    if (n !== undefined) limits[name.replace('-', '_')] = n;
  }
  if (Object.keys(limits).length) out.limits = limits;
  return out;
}
