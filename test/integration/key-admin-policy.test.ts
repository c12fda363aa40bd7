/**
 * Two rules of the key admin through a running gateway and its admin API (issue 23 findings 9
 * and 10): ending a key (expires_at in the past), reviving an expired one and opening it to every
 * address (`any`) need the role that issues keys (`admin`), not `operator`; deleting a key clears
 * its usage history, so a new key given the id starts at zero in the daily usage and the report.
 */
import fs from 'node:fs';
import path from 'node:path';
import Redis from 'ioredis';
import { fixtureListings } from '../fixtures/listings';
import { adminCall, readyAdminUrl } from '../kit/admin-api';
import {
  getWithKey, makeTempDir, removeTempDirs, sha256Hex, startBackend, startGateway, writeGatewayConfig, writeKeysFile, writeListingsFile, type Proc,
} from '../kit/gateway-stack';
import { startRedis, type RedisServer } from '../kit/redis-server';

jest.setTimeout(60_000);

const TOKENS = { ada: 'ada-admin-token-for-policy-tests-0123', otto: 'otto-operator-token-for-policy-tests' };
const today = (): string => new Date().toISOString().slice(0, 10);

let redisServer: RedisServer;
let redis: Redis;
let backend: Proc;
let gateway: Proc;
let adminUrl: string;

beforeAll(async () => {
  redisServer = await startRedis();
  redis = new Redis(redisServer.url);
  backend = await startBackend(writeListingsFile(fixtureListings()));
  const dir = makeTempDir();
  const tokensFile = path.join(dir, 'operators.yaml');
  fs.writeFileSync(tokensFile, [['ada', 'admin'], ['otto', 'operator']]
    .map(([name, role]) => `- name: ${name}\n  token_sha256: ${sha256Hex(TOKENS[name as keyof typeof TOKENS])}\n  role: ${role}\n`).join(''));
  gateway = await startGateway({
    backendUrl: backend.url, keysFile: writeKeysFile([], dir), gatewayConfig: writeGatewayConfig(undefined, dir),
    env: { REDIS_URL: redisServer.url, KEY_STORE: 'redis', ADMIN_PORT: '0', ADMIN_TOKENS_FILE: tokensFile, USAGE_FLUSH_MS: '200' },
  });
  adminUrl = await readyAdminUrl(gateway, TOKENS.ada);
}, 60_000);

afterAll(async () => {
  await gateway?.stop();
  await backend?.stop();
  redis?.disconnect();
  await redisServer?.stop();
  removeTempDirs();
});

const call = (token: string, method: string, url: string, body?: unknown) => adminCall(adminUrl, token, method, url, body);
const create = async (id: string): Promise<string> =>
  (await call(TOKENS.ada, 'POST', '/admin/keys', { id, tier: 'standard', countries: ['GB'], address: '127.0.0.1', per_minute: 1000 })).body.key;

describe('ending, reviving and opening a key need the admin role', () => {
  it.each([
    ['an expiry in the past (ends the key)', { expires_at: '2000-01-01T00:00:00Z' }],
    ['addresses with any', { addresses: ['any'] }],
  ])('operator: 403 for %s; admin: 200', async (_what, change) => {
    const id = `policy-${Object.keys(change)[0]}`;
    await create(id);
    const refused = await call(TOKENS.otto, 'PATCH', `/admin/keys/${id}`, change);
    expect(refused.status).toBe(403);
    expect(refused.body.error).toBe('forbidden');
    expect((await call(TOKENS.ada, 'GET', `/admin/keys/${id}`)).body.expires_at).toBeUndefined();
    expect((await call(TOKENS.ada, 'PATCH', `/admin/keys/${id}`, change)).status).toBe(200);
  });

  it('operator: 403 reviving an expired key (expires_at null or in the future); admin: 200', async () => {
    const value = await create('policy-revive');
    expect((await call(TOKENS.ada, 'PATCH', '/admin/keys/policy-revive', { expires_at: '2000-01-01T00:00:00Z' })).status).toBe(200);
    expect((await getWithKey(gateway.url, '/v1/ping', value)).status).toBe(401);
    for (const expires_at of [null, '2999-01-01T00:00:00Z']) {
      expect((await call(TOKENS.otto, 'PATCH', '/admin/keys/policy-revive', { expires_at })).status).toBe(403);
    }
    expect((await getWithKey(gateway.url, '/v1/ping', value)).status).toBe(401);
    expect((await call(TOKENS.ada, 'PATCH', '/admin/keys/policy-revive', { expires_at: null })).status).toBe(200);
  });

  it('operator may still set a future expiry on a live key, and change what is not an issuing act', async () => {
    await create('policy-future');
    expect((await call(TOKENS.otto, 'PATCH', '/admin/keys/policy-future', { expires_at: '2999-01-01T00:00:00Z', countries: ['FR'] })).status).toBe(200);
  });
});

it('deleting a key clears its usage history: a key re-created with the id starts at zero', async () => {
  const first = await create('reborn');
  for (let i = 0; i < 25; i++) expect((await getWithKey(gateway.url, '/v1/ping', first)).status).toBe(200);
  const daily = async (): Promise<number> =>
    (await call(TOKENS.ada, 'GET', `/admin/keys/reborn/usage/daily?from=${today()}&to=${today()}`)).body.days[0]?.accepted ?? 0;
  const deadline = Date.now() + 20_000;
  while ((await daily()) !== 25 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  expect(await daily()).toBe(25);

  expect((await call(TOKENS.ada, 'POST', '/admin/keys/reborn/revoke')).status).toBe(200);
  expect((await call(TOKENS.ada, 'DELETE', '/admin/keys/reborn')).status).toBe(204);
  await create('reborn');
  expect(await daily()).toBe(0);
  const report = (await call(TOKENS.ada, 'GET', `/admin/reports/monthly?month=${today().slice(0, 7)}`)).body;
  expect(JSON.stringify(report)).not.toContain('"reborn"');
});
