import { randomBytes } from 'node:crypto';
import { parseEnv } from '../../gateway/config/env';
import { loadGatewayConfig } from '../../gateway/config/gateway-config';
import path from 'node:path';

describe('environment', () => {
  it('has defaults that make npm start work', () => {
    expect(parseEnv({})).toMatchObject({ PORT: 8080, HOST: '127.0.0.1', KEY_STORE: 'file', CURSOR_TTL_SECONDS: 3600, UPSTREAM_TIMEOUT_MS: 10000, TRUST_PROXY: [] });
  });
  it('parses secrets and trusted proxies', () => {
    const secret = randomBytes(32).toString('base64url');
    const env = parseEnv({ CURSOR_SECRET: secret, CURSOR_PREVIOUS_SECRETS: `${secret}, ${secret}`, TRUST_PROXY: '10.0.0.0/8, ::1' });
    expect(env.CURSOR_PREVIOUS_SECRETS).toHaveLength(2);
    expect(env.TRUST_PROXY).toEqual(['10.0.0.0/8', '::1']);
  });
  it('reads GATEWAY_WORKERS as a number or auto (default 1)', () => {
    expect(parseEnv({}).GATEWAY_WORKERS).toBe(1);
    expect(parseEnv({ GATEWAY_WORKERS: '3', REDIS_URL: 'redis://127.0.0.1:6379' }).GATEWAY_WORKERS).toBe(3);
    expect(parseEnv({ GATEWAY_WORKERS: 'auto', REDIS_URL: 'redis://127.0.0.1:6379' }).GATEWAY_WORKERS).toBe('auto');
    expect(parseEnv({ ADMIN_TOKEN: 'a-long-enough-admin-token', KEY_STORE: 'redis', REDIS_URL: 'redis://127.0.0.1:6379' }).ADMIN_TOKEN).toBe('a-long-enough-admin-token');
  });
  it.each([
    [{ CURSOR_SECRET: 'short' }, 'CURSOR_SECRET'],
    [{ CURSOR_SECRET: randomBytes(16).toString('base64url') }, 'CURSOR_SECRET'],
    [{ PORT: 'eighty' }, 'PORT'],
    [{ TRUST_PROXY: 'true' }, 'TRUST_PROXY'],
    [{ TRUST_PROXY: '2' }, 'TRUST_PROXY'],
    [{ TRUST_PROXY: '10.0.0.0/99' }, 'TRUST_PROXY'],
    [{ TRUST_PROXY: '0.0.0.0/0' }, 'TRUST_PROXY'],
    [{ TRUST_PROXY: '10.0.0.1, ::/0' }, 'TRUST_PROXY'],
    [{ KEY_STORE: 'sql' }, 'KEY_STORE'],
    [{ UPSTREAM_TIMEOUT_MS: '-5' }, 'UPSTREAM_TIMEOUT_MS'],
    [{ KEY_STORE: 'redis' }, 'KEY_STORE'], // the Redis key store without REDIS_URL
    [{ LOG_LEVEL: 'loud' }, 'LOG_LEVEL'],
    [{ ADMIN_TOKEN: 'short', KEY_STORE: 'redis', REDIS_URL: 'redis://127.0.0.1:6379' }, 'ADMIN_TOKEN'],
    // A compose tool that passed `${ADMIN_TOKEN:-}` through unexpanded: long enough, and still refused.
    [{ ADMIN_TOKEN: '${ADMIN_TOKEN:-}', KEY_STORE: 'redis', REDIS_URL: 'redis://127.0.0.1:6379' }, 'ADMIN_TOKEN'],
    [{ ADMIN_TOKEN: 'prefix-0123456789-${TOKEN}', KEY_STORE: 'redis', REDIS_URL: 'redis://127.0.0.1:6379' }, 'ADMIN_TOKEN'],
    [{ GATEWAY_WORKERS: '2' }, 'GATEWAY_WORKERS'], // several workers without a shared Redis
    [{ GATEWAY_WORKERS: 'auto' }, 'GATEWAY_WORKERS'],
    [{ GATEWAY_WORKERS: '0', REDIS_URL: 'redis://127.0.0.1:6379' }, 'GATEWAY_WORKERS'],
    [{ GATEWAY_WORKERS: 'many', REDIS_URL: 'redis://127.0.0.1:6379' }, 'GATEWAY_WORKERS'],
    [{ GATEWAY_WORKERS: '1.5', REDIS_URL: 'redis://127.0.0.1:6379' }, 'GATEWAY_WORKERS'],
  ])('refuses %j naming the variable in one line', (env, name) => {
    expect(() => parseEnv(env)).toThrow(new RegExp(`^environment variable ${name}: [^\\n]+$`));
  });
});

describe('operator tokens with the keys file', () => {
  it('are accepted: the admin listener then serves the read-only console alone', () => {
    expect(parseEnv({ ADMIN_TOKEN: 'a-long-enough-admin-token' })).toMatchObject({ KEY_STORE: 'file', ADMIN_TOKEN: 'a-long-enough-admin-token' });
    expect(parseEnv({ ADMIN_TOKENS_FILE: 'operators.yaml' })).toMatchObject({ KEY_STORE: 'file', ADMIN_TOKENS_FILE: 'operators.yaml' });
  });
});

describe('gateway config', () => {
  it('loads the shipped config/gateway.yaml', () => {
    const config = loadGatewayConfig(path.resolve(__dirname, '../../config/gateway.yaml'));
    expect(config.tiers.standard.perMinute).toBeGreaterThan(0);
    expect(config.tiers.advanced.perMonth).toBeGreaterThan(config.tiers.standard.perMonth);
  });
});
