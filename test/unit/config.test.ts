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
    // Long enough, but guessable: under 128 bits as estimated from its length and kinds of characters.
    [{ ADMIN_TOKEN: 'aaaaaaaaaaaaaaaaaaaaaaaa', KEY_STORE: 'redis', REDIS_URL: 'redis://127.0.0.1:6379' }, 'ADMIN_TOKEN'],
    [{ ADMIN_TOKEN: '0123456789012345678901234567890123456', KEY_STORE: 'redis', REDIS_URL: 'redis://127.0.0.1:6379' }, 'ADMIN_TOKEN'],
    [{ GATEWAY_WORKERS: '2' }, 'GATEWAY_WORKERS'], // several workers without a shared Redis
    [{ GATEWAY_WORKERS: 'auto' }, 'GATEWAY_WORKERS'],
    [{ GATEWAY_WORKERS: '0', REDIS_URL: 'redis://127.0.0.1:6379' }, 'GATEWAY_WORKERS'],
    [{ GATEWAY_WORKERS: 'many', REDIS_URL: 'redis://127.0.0.1:6379' }, 'GATEWAY_WORKERS'],
    [{ GATEWAY_WORKERS: '1.5', REDIS_URL: 'redis://127.0.0.1:6379' }, 'GATEWAY_WORKERS'],
  ])('refuses %j naming the variable in one line', (env, name) => {
    expect(() => parseEnv(env)).toThrow(new RegExp(`^environment variable ${name}: [^\\n]+$`));
  });
});

describe('ADMIN_TOKEN strength', () => {
  it('refuses a weak token in one line that never shows it, and takes a random one', () => {
    const weak = 'aaaaaaaaaaaaaaaaaaaaaaaa';
    expect(() => parseEnv({ ADMIN_TOKEN: weak, KEY_STORE: 'redis', REDIS_URL: 'redis://127.0.0.1:6379' })).toThrow(/^environment variable ADMIN_TOKEN: too weak: at least 128 bits/);
    try {
      parseEnv({ ADMIN_TOKEN: weak, KEY_STORE: 'redis', REDIS_URL: 'redis://127.0.0.1:6379' });
    } catch (err) {
      expect((err as Error).message).not.toContain(weak);
    }
    for (const token of [randomBytes(32).toString('hex'), randomBytes(32).toString('base64url')]) {
      expect(parseEnv({ ADMIN_TOKEN: token, KEY_STORE: 'redis', REDIS_URL: 'redis://127.0.0.1:6379' }).ADMIN_TOKEN).toBe(token);
    }
  });
});

describe('Redis topology', () => {
  it('chooses one Redis, a cluster or a sentinel-guarded master, with credentials and TLS', () => {
    expect(parseEnv({ REDIS_URL: 'rediss://gw:s3cret@redis.example:6380/2' }).redis).toMatchObject({ kind: 'single', where: 'redis.example:6380', tls: {} });
    expect(parseEnv({ REDIS_CLUSTER_NODES: '10.0.0.1:7000, 10.0.0.2:7001', REDIS_PASSWORD: 'p', REDIS_TLS: '1' }).redis).toMatchObject({
      kind: 'cluster', nodes: [{ host: '10.0.0.1', port: 7000 }, { host: '10.0.0.2', port: 7001 }], password: 'p', tls: {},
    });
    expect(parseEnv({ REDIS_SENTINELS: '[::1]:26379,s2:26379', REDIS_SENTINEL_MASTER: 'main', REDIS_USERNAME: 'gw', REDIS_PASSWORD: 'p' }).redis).toMatchObject({
      kind: 'sentinel', sentinels: [{ host: '::1', port: 26379 }, { host: 's2', port: 26379 }], masterName: 'main', username: 'gw',
    });
    expect(parseEnv({ REDIS_CLUSTER_NODES: '10.0.0.1:7000', KEY_STORE: 'redis' }).KEY_STORE).toBe('redis');
    expect(parseEnv({}).redis).toBeUndefined();
  });
  it.each([
    [{ REDIS_URL: 'redis://a:1', REDIS_CLUSTER_NODES: 'b:2' }, 'REDIS_CLUSTER_NODES'],
    [{ REDIS_CLUSTER_NODES: 'b:2', REDIS_SENTINELS: 'c:3', REDIS_SENTINEL_MASTER: 'm' }, 'REDIS_SENTINELS'],
    [{ REDIS_URL: 'http://a:1' }, 'REDIS_URL'],
    [{ REDIS_URL: 'not a url' }, 'REDIS_URL'],
    [{ REDIS_URL: 'redis://a:1', REDIS_PASSWORD: 'p' }, 'REDIS_PASSWORD'],
    [{ REDIS_URL: 'redis://a:1', REDIS_TLS: '1' }, 'REDIS_TLS'],
    [{ REDIS_CLUSTER_NODES: 'a' }, 'REDIS_CLUSTER_NODES'],
    [{ REDIS_CLUSTER_NODES: 'a:99999' }, 'REDIS_CLUSTER_NODES'],
    [{ REDIS_SENTINELS: 'a:1' }, 'REDIS_SENTINELS'],
    [{ REDIS_SENTINEL_MASTER: 'm' }, 'REDIS_SENTINEL_MASTER'],
    [{ REDIS_CLUSTER_NODES: 'a:1', REDIS_TLS: 'yes' }, 'REDIS_TLS'],
    [{ REDIS_CLUSTER_NODES: 'a:1', REDIS_TLS: '1', REDIS_TLS_CA_FILE: '/nonexistent/ca.pem' }, 'REDIS_TLS_CA_FILE'],
    [{ REDIS_CLUSTER_NODES: 'a:1', REDIS_TLS_CA_FILE: __filename }, 'REDIS_TLS_CA_FILE'],
    [{ REDIS_PASSWORD: 'p' }, 'REDIS_PASSWORD'],
    [{ REDIS_CLUSTER_NODES: 'a:1', REDIS_USERNAME: 'u' }, 'REDIS_USERNAME'],
  ])('refuses %j naming the variable in one line, never a password', (env, name) => {
    expect(() => parseEnv(env)).toThrow(new RegExp(`^environment variable ${name}: [^\\n]+$`));
    try {
      parseEnv(env);
    } catch (err) {
      expect((err as Error).message).not.toMatch(/\bp\b|s3cret/);
    }
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
