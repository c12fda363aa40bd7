/**
 * Named operator tokens and roles on the admin API, against a real gateway and redis-server:
 * each role's calls allowed or refused with 403 `forbidden` in the `{error, message}` form,
 * ADMIN_TOKEN as an `admin` named `admin`, hot reload of ADMIN_TOKENS_FILE (a broken file is
 * refused with one line naming the entry and the running tokens stay), and a broken file at
 * start-up stopping the gateway with one line.
 */
import fs from 'node:fs';
import path from 'node:path';
import { adminCall, adminFetch, readyAdminUrl } from '../kit/admin-api';
import {
  budget, eventually, gatewayEnv, makeTempDir, removeTempDirs, runToExit, sha256Hex, writeGatewayConfig, writeKeysFile, type Proc,
} from '../kit/gateway-stack';
import type { RedisServer } from '../kit/redis-server';
import { startRedisStack, type RedisStack } from '../kit/redis-stack';

const ADMIN_TOKEN = 'env-admin-token-for-tests-0123456789';
const TOKENS = { viewer: 'viewer-token-for-tests-0123456789', operator: 'operator-token-for-tests-0123456789', admin: 'named-admin-token-for-tests-0123456789' };
const NAMES = { viewer: 'vera', operator: 'otto', admin: 'ada' };

let stack: RedisStack;
let redis: RedisServer;
let gateway: Proc;
let adminUrl: string;
let tokensFile: string;
let dir: string;

const tokensYaml = (entries: Array<{ name: string; token: string; role: string }>): string =>
  entries.map((e) => `- name: ${e.name}\n  token_sha256: ${sha256Hex(e.token)}\n  role: ${e.role}\n`).join('');
const baseEntries = (Object.keys(TOKENS) as Array<keyof typeof TOKENS>).map((role) => ({ name: NAMES[role], token: TOKENS[role], role }));

/** Every admin answer is checked against openapi/admin.yaml (a departure throws). */
const call = (method: string, url: string, token: string, body?: unknown) => adminCall(adminUrl, token, method, url, body);

beforeAll(async () => {
  dir = makeTempDir();
  tokensFile = path.join(dir, 'operators.yaml');
  fs.writeFileSync(tokensFile, tokensYaml(baseEntries));
  stack = await startRedisStack({ gateways: [{ ADMIN_PORT: '0', ADMIN_TOKEN, ADMIN_TOKENS_FILE: tokensFile }] });
  ({ redisServer: redis, gateway } = stack);
  adminUrl = await readyAdminUrl(gateway, TOKENS.viewer);
}, budget(60_000));

afterAll(async () => {
  await stack?.stop();
  removeTempDirs();
});

const create = (id: string, token = TOKENS.admin) => call('POST', '/admin/keys', token, { id, tier: 'standard', countries: ['GB'], address: '127.0.0.1' });

describe('roles on the admin API', () => {
  beforeAll(async () => {
    expect((await create('role-target')).status).toBe(201);
  });

  const forbidden = (answer: { status: number; body: Record<string, unknown> }, role: string) => {
    expect(answer.status).toBe(403);
    expect(answer.body.error).toBe('forbidden');
    expect(answer.body.message).toEqual(expect.stringContaining(role));
    expect(Object.keys(answer.body).sort()).toEqual(['error', 'message']);
  };

  it('a viewer reads records and usage, and every change is 403 forbidden', async () => {
    const t = TOKENS.viewer;
    expect((await call('GET', '/admin/keys', t)).status).toBe(200);
    expect((await call('GET', '/admin/keys/role-target', t)).status).toBe(200);
    expect((await call('GET', '/admin/keys/role-target/usage', t)).status).toBe(200);
    forbidden(await call('PATCH', '/admin/keys/role-target', t, { tier: 'advanced' }), 'viewer');
    forbidden(await call('POST', '/admin/keys/role-target/pause', t, { reason: 'unpaid_renewal' }), 'viewer');
    forbidden(await call('POST', '/admin/keys/role-target/settle', t, {}), 'viewer');
    forbidden(await call('POST', '/admin/keys/role-target/revoke', t, {}), 'viewer');
    forbidden(await call('POST', '/admin/keys/role-target/roll', t, { grace_seconds: 0 }), 'viewer');
    forbidden(await create('viewer-made', t), 'viewer');
    expect((await call('GET', '/admin/keys/role-target', t)).body).toMatchObject({ tier: 'standard', status: 'active' });
  });

  it('an operator also pauses, settles and changes records; create, roll and revoke are 403', async () => {
    const t = TOKENS.operator;
    expect((await call('POST', '/admin/keys/role-target/pause', t, { reason: 'unpaid_renewal' })).body).toMatchObject({ status: 'paused' });
    expect((await call('POST', '/admin/keys/role-target/settle', t, {})).body).toMatchObject({ status: 'active' });
    expect((await call('PATCH', '/admin/keys/role-target', t, { tier: 'advanced', countries: ['FR'], address: '127.0.0.2', per_day: 50 })).body)
      .toMatchObject({ tier: 'advanced', countries: ['FR'], address: '127.0.0.2' });
    forbidden(await call('POST', '/admin/keys/role-target/roll', t, { grace_seconds: 0 }), 'operator');
    forbidden(await call('POST', '/admin/keys/role-target/revoke', t, {}), 'operator');
    forbidden(await create('operator-made', t), 'operator');
  });

  it('an admin (named, or ADMIN_TOKEN) also creates, rolls and revokes', async () => {
    expect((await create('ada-made')).status).toBe(201);
    expect((await call('POST', '/admin/keys/ada-made/roll', TOKENS.admin, { grace_seconds: 0 })).status).toBe(201);
    expect((await call('POST', '/admin/keys/ada-made/revoke', ADMIN_TOKEN, {})).body).toMatchObject({ status: 'revoked' });
  });

  it('an unknown, empty or missing token is 401 unauthenticated', async () => {
    expect((await call('GET', '/admin/keys', 'not-a-token-0123456789')).body.error).toBe('unauthenticated');
    expect((await call('GET', '/admin/keys', '')).status).toBe(401);
    const bare = await adminFetch(`${adminUrl}/admin/keys`);
    expect(bare.status).toBe(401);
  });
});

describe('ADMIN_TOKENS_FILE hot reload', () => {
  const GENTLY = { intervalMs: 300 };
  it('a new token works, a removed one stops, a broken file is refused with one line and the running tokens stay', async () => {
    const newToken = 'new-operator-token-for-tests-0123456789';
    fs.writeFileSync(tokensFile, tokensYaml([...baseEntries.filter((e) => e.name !== NAMES.viewer), { name: 'nina', token: newToken, role: 'viewer' }]));
    // Each 401 of a not-yet-known token is a failed guess (10 a minute per address): poll gently
    // while the reloader waits for the file to settle (half a second).
    await eventually('the new token accepted', async () => (await call('GET', '/admin/keys', newToken)).status === 200, GENTLY);
    await eventually('the removed token refused', async () => (await call('GET', '/admin/keys', TOKENS.viewer)).status === 401);

    const linesBefore = gateway.output.length;
    fs.writeFileSync(tokensFile, `${tokensYaml(baseEntries)}- name: broken\n  token_sha256: not-a-hash\n  role: viewer\n`);
    const refusal = await eventually('the refusal logged', () => gateway.output.slice(linesBefore).find((l) => l.includes('configuration refused')));
    expect(refusal).toContain(`${tokensFile}: entry [3] (name broken), field token_sha256: must be the SHA-256`);
    expect(refusal).not.toContain('\\n');
    // The running set stays: the new token still works, the removed viewer still does not.
    expect((await call('GET', '/admin/keys', newToken)).status).toBe(200);
    expect((await call('GET', '/admin/keys', TOKENS.viewer)).status).toBe(401);
    expect((await call('GET', '/admin/keys', ADMIN_TOKEN)).status).toBe(200);

    fs.writeFileSync(tokensFile, tokensYaml(baseEntries));
    await eventually('the viewer token accepted again', async () => (await call('GET', '/admin/keys', TOKENS.viewer)).status === 200, GENTLY);
    for (const token of [...Object.values(TOKENS), ADMIN_TOKEN, newToken]) expect(gateway.output.join('\n')).not.toContain(token);
  }, budget(30_000));
});

describe('a broken ADMIN_TOKENS_FILE at start-up', () => {
  it('stops the gateway with exit 1 and one line naming the file and the entry', async () => {
    const bad = path.join(dir, 'bad-operators.yaml');
    fs.writeFileSync(bad, `${tokensYaml(baseEntries)}- name: eve\n  token_sha256: ${sha256Hex('eve')}\n  role: superuser\n`);
    const result = await runToExit('gateway/main.js', gatewayEnv(writeKeysFile([], dir), writeGatewayConfig(undefined, dir), {
      REDIS_URL: redis.url, KEY_STORE: 'redis', ADMIN_PORT: '0', ADMIN_TOKENS_FILE: bad,
    }));
    expect(result.code).toBe(1);
    expect(result.stderr.trim()).toBe(`config error: ${bad}: entry [3] (name eve), field role: must be viewer, operator or admin`);
  });
});
