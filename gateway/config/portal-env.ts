import { z } from 'zod';
import { ConfigError } from './config-error';
import { parseEnvVars } from './env-vars';


/**
 * The key holders' portal (docs/portal.md). `PORTAL_PORT` unset: the portal is off and nothing
 * listens. On, `PORTAL_PUBLIC_URL` is required: the address holders reach (links, the OpenID
 * redirect URI, the Origin every change must come from); its scheme decides the `Secure` cookie flag.
 */
const PortalEnvSchema = z.object({
  PORTAL_PORT: z.coerce.number({ invalid_type_error: 'must be a port number' }).int('must be a port number').min(0, 'must be a port number').max(65535, 'must be a port number').optional(),
  PORTAL_HOST: z.string().min(1).default('127.0.0.1'),
  PORTAL_PUBLIC_URL: z
    .string()
    .url('must be an http:// or https:// URL')
    .refine((u) => /^https?:\/\/[^/?#]+\/?$/.test(u), 'must be an http:// or https:// origin with no path, query or fragment (e.g. https://portal.example.com)')
    .transform((u) => u.replace(/\/$/, ''))
    .optional(),
  /** OpenID Connect sign-in: all three, or none. */
  PORTAL_OIDC_ISSUER: z.string().url('must be the issuer URL (its discovery document is read at start-up)').optional(),
  PORTAL_OIDC_CLIENT_ID: z.string().min(1).optional(),
  PORTAL_OIDC_CLIENT_SECRET: z.string().min(1).optional(),
  /**
   * Not for production: lets the OpenID client talk to an http:// issuer (a provider on loopback in
   * tests). Refused for an issuer that is not on a loopback address.
   */
  PORTAL_OIDC_ALLOW_HTTP: z.enum(['0', '1']).default('0'),
  /**
   * The demo (`npm start`): at start-up, issue a one-time sign-in link for this account and log it
   * (`portal sign-in link`). Only with the keys-file store, whose accounts are read-only.
   */
  PORTAL_DEMO_LINK_ACCOUNT: z.string().regex(/^[A-Za-z0-9._-]{1,64}$/, 'must be an account id').optional(),
});

export interface PortalOidcEnv {
  readonly issuer: string;
  readonly clientId: string;
  readonly clientSecret: string;
  readonly allowHttp: boolean;
}

export interface PortalEnv {
  readonly port: number;
  readonly host: string;
  /** Origin only, no trailing slash. */
  readonly publicUrl: string;
  readonly secureCookies: boolean;
  readonly oidc?: PortalOidcEnv;
  readonly demoLinkAccount?: string;
}

const LOOPBACK = /^(127\.\d+\.\d+\.\d+|localhost|\[::1\])$/;

/** The portal's variables; undefined when PORTAL_PORT is unset (the portal is off). Throws a one-line ConfigError. */
export function parsePortalEnv(source: NodeJS.ProcessEnv = process.env): PortalEnv | undefined {
  const e = parseEnvVars(PortalEnvSchema, source, (k) => k.startsWith('PORTAL_'));
  if (e.PORTAL_PORT === undefined) return undefined;
  if (!e.PORTAL_PUBLIC_URL) throw new ConfigError('environment variable PORTAL_PUBLIC_URL: required when PORTAL_PORT is set (the address key holders reach, e.g. https://portal.example.com)');
  const oidcVars = [e.PORTAL_OIDC_ISSUER, e.PORTAL_OIDC_CLIENT_ID, e.PORTAL_OIDC_CLIENT_SECRET];
  if (oidcVars.some(Boolean) && !oidcVars.every(Boolean)) {
    const missing = ['PORTAL_OIDC_ISSUER', 'PORTAL_OIDC_CLIENT_ID', 'PORTAL_OIDC_CLIENT_SECRET'].find((_n, i) => !oidcVars[i])!;
    throw new ConfigError(`environment variable ${missing}: required with the other PORTAL_OIDC_* variables (OpenID Connect sign-in needs issuer, client id and secret)`);
  }
  if (e.PORTAL_OIDC_ISSUER && e.PORTAL_OIDC_ALLOW_HTTP === '1' && !LOOPBACK.test(new URL(e.PORTAL_OIDC_ISSUER).hostname)) {
    throw new ConfigError('environment variable PORTAL_OIDC_ALLOW_HTTP: only for an issuer on a loopback address');
  }
  return Object.freeze({
    port: e.PORTAL_PORT,
    host: e.PORTAL_HOST,
    publicUrl: e.PORTAL_PUBLIC_URL,
    secureCookies: e.PORTAL_PUBLIC_URL.startsWith('https://'),
    ...(e.PORTAL_OIDC_ISSUER
      ? { oidc: Object.freeze({ issuer: e.PORTAL_OIDC_ISSUER, clientId: e.PORTAL_OIDC_CLIENT_ID!, clientSecret: e.PORTAL_OIDC_CLIENT_SECRET!, allowHttp: e.PORTAL_OIDC_ALLOW_HTTP === '1' }) }
      : {}),
    ...(e.PORTAL_DEMO_LINK_ACCOUNT ? { demoLinkAccount: e.PORTAL_DEMO_LINK_ACCOUNT } : {}),
  });
}
