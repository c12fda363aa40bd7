import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadGatewayConfig } from '../../gateway/config/gateway-config';
import { parsePortalEnv } from '../../gateway/config/portal-env';
import { DEFAULT_SELF_SERVICE } from '../../gateway/config/portal-policy';
import { ConfigError } from '../../gateway/config/config-error';

const TIERS = 'tiers:\n  standard: { per_minute: 1, per_day: 1, per_month: 1 }\n  advanced: { per_minute: 1, per_day: 1, per_month: 1 }\n';
function config(text: string): string {
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'portal-config-')), 'gateway.yaml');
  fs.writeFileSync(file, TIERS + text);
  return file;
}
const oneLine = (f: () => unknown): string => {
  try {
    f();
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as Error).message).not.toContain('\n');
    return (err as Error).message;
  }
  throw new Error('no ConfigError');
};

describe('portal.self_service in the gateway YAML', () => {
  test('defaults: addresses, roll (3600 s grace) and revoke on; any address refused; countries and tier by request', () => {
    expect(loadGatewayConfig(config('')).selfService).toEqual(DEFAULT_SELF_SERVICE);
    expect(DEFAULT_SELF_SERVICE).toEqual({ addresses: true, allowAnyAddress: false, roll: true, rollGraceSeconds: 3600, revoke: true, countries: 'request', tier: 'request', changesPerMinute: 30 });
  });
  test('every field read', () => {
    const file = config('portal:\n  self_service: { addresses: false, allow_any_address: true, roll: false, roll_grace_seconds: 60, revoke: false, countries: direct, tier: "off", changes_per_minute: 5 }\n');
    expect(loadGatewayConfig(file).selfService).toEqual({ addresses: false, allowAnyAddress: true, roll: false, rollGraceSeconds: 60, revoke: false, countries: 'direct', tier: 'off', changesPerMinute: 5 });
  });
  test('a bad value is one line naming the file and the field', () => {
    const file = config('portal:\n  self_service: { countries: sometimes }\n');
    expect(oneLine(() => loadGatewayConfig(file))).toBe(`${file}: portal.self_service.countries: must be off, request or direct`);
    expect(oneLine(() => loadGatewayConfig(config('portal:\n  self_service: { roll: maybe }\n')))).toContain('portal.self_service.roll');
    expect(oneLine(() => loadGatewayConfig(config('portal:\n  self_service: { changes_per_minute: 0 }\n')))).toContain('portal.self_service.changes_per_minute: must be 1 or more');
    expect(oneLine(() => loadGatewayConfig(config('portal:\n  self_service: { unknown: 1 }\n')))).toContain('portal.self_service');
  });
});

describe('PORTAL_* variables', () => {
  test('off unless PORTAL_PORT is set', () => {
    expect(parsePortalEnv({ PORTAL_PUBLIC_URL: 'https://portal.example.com' })).toBeUndefined();
  });
  test('on: the public URL is required; its scheme decides the Secure cookie flag', () => {
    expect(oneLine(() => parsePortalEnv({ PORTAL_PORT: '8082' }))).toMatch(/^environment variable PORTAL_PUBLIC_URL: required/);
    expect(parsePortalEnv({ PORTAL_PORT: '8082', PORTAL_PUBLIC_URL: 'https://portal.example.com/' })).toEqual({ port: 8082, host: '127.0.0.1', publicUrl: 'https://portal.example.com', secureCookies: true });
    expect(parsePortalEnv({ PORTAL_PORT: '8082', PORTAL_PUBLIC_URL: 'http://127.0.0.1:8082' })?.secureCookies).toBe(false);
    expect(oneLine(() => parsePortalEnv({ PORTAL_PORT: '8082', PORTAL_PUBLIC_URL: 'https://portal.example.com/app' }))).toMatch(/^environment variable PORTAL_PUBLIC_URL: /);
    expect(oneLine(() => parsePortalEnv({ PORTAL_PORT: 'eighty', PORTAL_PUBLIC_URL: 'https://p.example' }))).toMatch(/^environment variable PORTAL_PORT: must be a port number/);
  });
  test('OpenID Connect needs issuer, client id and secret together; the secret is never in a message', () => {
    const base = { PORTAL_PORT: '8082', PORTAL_PUBLIC_URL: 'https://p.example' };
    const line = oneLine(() => parsePortalEnv({ ...base, PORTAL_OIDC_ISSUER: 'https://id.example', PORTAL_OIDC_CLIENT_SECRET: 'very-secret-value' }));
    expect(line).toMatch(/^environment variable PORTAL_OIDC_CLIENT_ID: required/);
    expect(line).not.toContain('very-secret-value');
    expect(parsePortalEnv({ ...base, PORTAL_OIDC_ISSUER: 'https://id.example', PORTAL_OIDC_CLIENT_ID: 'c', PORTAL_OIDC_CLIENT_SECRET: 's' })?.oidc).toEqual({ issuer: 'https://id.example', clientId: 'c', clientSecret: 's', allowHttp: false });
    expect(oneLine(() => parsePortalEnv({ ...base, PORTAL_OIDC_ISSUER: 'http://id.example', PORTAL_OIDC_CLIENT_ID: 'c', PORTAL_OIDC_CLIENT_SECRET: 's', PORTAL_OIDC_ALLOW_HTTP: '1' }))).toMatch(/PORTAL_OIDC_ALLOW_HTTP: only for an issuer on a loopback address/);
  });
});
