import { z } from 'zod';
import { ConfigError } from './config-error';
import { parseEnvVars } from './env-vars';

const portNumber = z.coerce.number({ invalid_type_error: 'must be a port number' }).int('must be a port number').min(0, 'must be a port number').max(65535, 'must be a port number');

/** A Stripe endpoint secret as the dashboard shows it; the message never shows the value. */
const STRIPE_SECRET = /^whsec_[A-Za-z0-9+/=_-]{8,}$/;

/**
 * The providers' listener and the providers on it. `HOOKS_PORT` unset: nothing listens. Stripe is
 * on with `STRIPE_WEBHOOK_SECRET` (several, comma-separated, while a secret is rolled); GitHub's
 * leaked-key reports are on with the listener unless `LEAKS_GITHUB=off`.
 */
const HooksEnvSchema = z.object({
  HOOKS_PORT: portNumber.optional(),
  HOOKS_HOST: z.string().min(1).default('127.0.0.1'),
  LEAKS_GITHUB: z.enum(['on', 'off']).default('on'),
  STRIPE_WEBHOOK_SECRET: z
    .string()
    .transform((v) => v.split(',').map((s) => s.trim()).filter(Boolean))
    .refine((list) => list.length > 0 && list.every((s) => STRIPE_SECRET.test(s)), 'must be one or more endpoint secrets ("whsec_…"), comma-separated (the value is not shown)')
    .optional(),
  /** Reads a dispute's charge (its customer); without it dispute events are logged and ignored. */
  STRIPE_API_KEY: z.string().regex(/^(sk|rk)_\S+$/, 'must be a secret or restricted key ("sk_…" or "rk_…"; the value is not shown)').optional(),
  STRIPE_API_URL: z.string().url('must be an http:// or https:// URL').refine((u) => /^https?:\/\//.test(u), 'must be an http:// or https:// URL').default('https://api.stripe.com'),
});

export interface StripeEnv {
  /** Every secret a delivery may be signed with (one, or two while rolling). */
  readonly webhookSecrets: readonly string[];
  readonly apiKey?: string;
  readonly apiUrl: string;
}

export interface HooksEnv {
  /** Undefined: the listener is off. */
  readonly port?: number;
  readonly host: string;
  readonly leaksGithub: boolean;
  /** Undefined: `POST /hooks/stripe` is not a path (404). */
  readonly stripe?: StripeEnv;
}

/** The providers' variables. Throws a one-line ConfigError (never showing a secret). */
export function parseHooksEnv(source: NodeJS.ProcessEnv = process.env): HooksEnv {
  const names = ['HOOKS_PORT', 'HOOKS_HOST', 'LEAKS_GITHUB', 'STRIPE_WEBHOOK_SECRET', 'STRIPE_API_KEY', 'STRIPE_API_URL'];
  const e = parseEnvVars(HooksEnvSchema, source, (k) => names.includes(k));
  if (e.HOOKS_PORT !== undefined && !e.STRIPE_WEBHOOK_SECRET && e.LEAKS_GITHUB === 'off') {
    throw new ConfigError('environment variable HOOKS_PORT: set, but no provider is on (set STRIPE_WEBHOOK_SECRET, or leave LEAKS_GITHUB on)');
  }
  if (e.HOOKS_PORT === undefined && e.STRIPE_WEBHOOK_SECRET) {
    throw new ConfigError('environment variable STRIPE_WEBHOOK_SECRET: needs HOOKS_PORT (the providers\' listener Stripe posts to)');
  }
  return Object.freeze({
    ...(e.HOOKS_PORT !== undefined ? { port: e.HOOKS_PORT } : {}),
    host: e.HOOKS_HOST,
    leaksGithub: e.LEAKS_GITHUB === 'on',
    ...(e.STRIPE_WEBHOOK_SECRET
      ? { stripe: Object.freeze({ webhookSecrets: e.STRIPE_WEBHOOK_SECRET, apiUrl: e.STRIPE_API_URL.replace(/\/$/, ''), ...(e.STRIPE_API_KEY ? { apiKey: e.STRIPE_API_KEY } : {}) }) }
      : {}),
  });
}
