/**
 * The operator console's holder pages against a real gateway and redis-server: the accounts page,
 * one account with its keys and requests, the account on a key's page, the requests page with
 * approve and decline (CSRF and origin checked as every console form; role `operator`); with the
 * keys file, the accounts list read-only; a bad `accounts:` list stops start-up with one line.
 */
import fs from 'node:fs';
import path from 'node:path';
import Redis from 'ioredis';
import { fixtureListings } from '../fixtures/listings';
import { adminCall, readyAdminUrl } from '../kit/admin-api';
import {
  gatewayEnv, keysFileText, makeTempDir, randomKeyValue, removeTempDirs, runToExit, sha256Hex, startBackend, startGateway, writeGatewayConfig, writeKeysFile, writeListingsFile,
  writeTempFile, type Proc,
} from '../kit/gateway-stack';
import { announcedUrl } from '../kit/log-lines';
import { startRedis, type RedisServer } from '../kit/redis-server';
import { runAs } from '../../gateway/audit/actor';
import { loadGatewayConfig } from '../../gateway/config/gateway-config';
import { createKeyAdmin } from '../../gateway/keys/key-admin';
import { createRedisHolderStores } from '../../gateway/requests/holder-stores';

jest.setTimeout(60_000);

const TOKENS = { viewer: 'viewer-token-for-console-holders-0123456789', operator: 'operator-token-for-console-holders-0123456789', admin: 'admin-token-for-console-holders-0123456789' };
const NAMES = { viewer: 'vera', operator: 'otto', admin: 'ada' };

let redisServer: RedisServer;
let redis: Redis;
let backend: Proc;
let gateway: Proc;
let fileGateway: Proc;
let adminUrl: string;
let fileAdminUrl: string;
let holders: ReturnType<typeof createRedisHolderStores>;
let dir: string;
let tokensFile: string;

interface Session { cookie: string; csrf: string; base: string }
async function signIn(base: string, token: string): Promise<Session> {
  const res = await fetch(`${base}/console/sign-in`, { method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: `token=${token}` });
  expect(res.status).toBe(303);
  const cookie = res.headers.get('set-cookie')!.split(';')[0]!;
  const keys = await (await fetch(`${base}/console/keys`, { headers: { cookie } })).text();
  return { cookie, csrf: /name="_csrf" value="([^"]+)"/.exec(keys)![1]!, base };
}
const page = async (s: Session, url: string): Promise<{ status: number; text: string }> => {
  const res = await fetch(`${s.base}${url}`, { headers: { cookie: s.cookie }, redirect: 'manual' });
  return { status: res.status, text: await res.text() };
};
const post = (s: Session, url: string, body: string, headers: Record<string, string> = {}) =>
  fetch(`${s.base}${url}`, { method: 'POST', redirect: 'manual', headers: { cookie: s.cookie, 'content-type': 'application/x-www-form-urlencoded', ...headers }, body });

beforeAll(async () => {
  redisServer = await startRedis();
  redis = new Redis(redisServer.url);
  backend = await startBackend(writeListingsFile(fixtureListings()));
  dir = makeTempDir();
  tokensFile = path.join(dir, 'operators.yaml');
  fs.writeFileSync(tokensFile, (Object.keys(TOKENS) as Array<keyof typeof TOKENS>).map((role) => `- name: ${NAMES[role]}\n  token_sha256: ${sha256Hex(TOKENS[role])}\n  role: ${role}\n`).join(''));
  const gatewayConfig = writeGatewayConfig(undefined, dir);
  gateway = await startGateway({ backendUrl: backend.url, keysFile: writeKeysFile([], dir), gatewayConfig, env: { REDIS_URL: redisServer.url, KEY_STORE: 'redis', ADMIN_PORT: '0', ADMIN_TOKENS_FILE: tokensFile } });
  adminUrl = await readyAdminUrl(gateway, TOKENS.viewer);
  holders = createRedisHolderStores(redis as never, createKeyAdmin(redis as never, loadGatewayConfig(gatewayConfig)));
  expect((await adminCall(adminUrl, TOKENS.admin, 'POST', '/admin/accounts', { id: 'acme', name: 'Acme <Estates>', emails: ['ops@acme.example'], billing_customer: 'cus_7' })).status).toBe(201);
  expect((await adminCall(adminUrl, TOKENS.admin, 'POST', '/admin/keys', { id: 'acme-key', tier: 'standard', countries: ['GB'], address: '127.0.0.1', account: 'acme' })).status).toBe(201);
  expect((await adminCall(adminUrl, TOKENS.admin, 'POST', '/admin/keys', { id: 'ops-key', tier: 'standard', countries: ['GB'], address: '127.0.0.1' })).status).toBe(201);
  const keysFileWithAccounts = writeTempFile('keys-accounts.yaml',
    `accounts:\n  - id: filed\n    name: Filed Holder\n    emails: [filed@x.example]\n${keysFileText([{ id: 'filed-key', value: randomKeyValue('f'), tier: 'standard', countries: ['GB'], address: '127.0.0.1', status: 'active' }]).replace(/^keys:\n/, 'keys:\n').replace('    status: active\n', '    status: active\n    account: filed\n')}`, dir);
  fileGateway = await startGateway({ backendUrl: backend.url, keysFile: keysFileWithAccounts, gatewayConfig, env: { ADMIN_PORT: '0', ADMIN_TOKENS_FILE: tokensFile } });
  fileAdminUrl = await announcedUrl(fileGateway, 'admin api listening');
});

afterAll(async () => {
  await gateway?.stop();
  await fileGateway?.stop();
  await backend?.stop();
  redis?.disconnect();
  await redisServer?.stop();
  removeTempDirs();
});

describe('accounts in the console (Redis)', () => {
  test('the accounts page lists the account, escaped, with its key count; one account shows its keys', async () => {
    const s = await signIn(adminUrl, TOKENS.viewer);
    const list = await page(s, '/console/accounts');
    expect(list.status).toBe(200);
    expect(list.text).toContain('data-account-id="acme"');
    expect(list.text).toContain('Acme &lt;Estates&gt;');
    expect(list.text).not.toContain('Acme <Estates>');
    expect(list.text).toContain('href="/console/accounts"');
    const one = await page(s, '/console/accounts/acme');
    expect(one.status).toBe(200);
    expect(one.text).toContain('cus_7');
    expect(one.text).toMatch(/<tr data-key-id="acme-key"><td><a href="\/console\/keys\/acme-key">/);
    expect(one.text).not.toContain('ops-key');
    expect((await page(s, '/console/accounts/nobody')).status).toBe(404);
  });

  test("a key's page names its account (a link), or says it has none", async () => {
    const s = await signIn(adminUrl, TOKENS.viewer);
    expect((await page(s, '/console/keys/acme-key')).text).toMatch(/<dd id="key-account"><a href="\/console\/accounts\/acme">acme<\/a><\/dd>/);
    expect((await page(s, '/console/keys/ops-key')).text).toContain('none (an operator\'s key)');
  });
});

describe('requests in the console', () => {
  let requestId: string;
  beforeAll(async () => {
    requestId = (await runAs({ name: 'holder:acme:ops@acme.example', channel: 'portal' }, () => holders.requests.create({ keyId: 'acme-key', accountId: 'acme', change: { countries: ['FR'] } }))).id;
  });

  test('a viewer sees the pending request without forms, and cannot approve', async () => {
    const s = await signIn(adminUrl, TOKENS.viewer);
    const list = await page(s, '/console/requests');
    expect(list.text).toContain(`data-request-id="${requestId}"`);
    expect(list.text).toContain('add countries FR');
    expect(list.text).not.toContain(`/console/requests/${requestId}/approve`);
    expect((await post(s, `/console/requests/${requestId}/approve`, `_csrf=${s.csrf}`)).status).toBe(403);
    expect((await holders.requests.get(requestId))?.status).toBe('pending');
  });

  test('forged posts (no CSRF token, a foreign Origin) change nothing; the form approves, post-redirect-get', async () => {
    const s = await signIn(adminUrl, TOKENS.operator);
    const list = await page(s, '/console/requests');
    expect(list.text).toContain(`action="/console/requests/${requestId}/approve"`);
    expect((await post(s, `/console/requests/${requestId}/approve`, '')).status).toBe(403);
    expect((await post(s, `/console/requests/${requestId}/approve`, `_csrf=${s.csrf}`, { origin: 'https://evil.example' })).status).toBe(403);
    expect((await holders.requests.get(requestId))?.status).toBe('pending');
    const done = await post(s, `/console/requests/${requestId}/approve`, `_csrf=${s.csrf}`);
    expect(done.status).toBe(303);
    expect(done.headers.get('location')).toBe('/console/requests?done=approved');
    expect(await holders.requests.get(requestId)).toMatchObject({ status: 'approved', decidedBy: 'otto' });
    expect((await adminCall(adminUrl, TOKENS.viewer, 'GET', '/admin/keys/acme-key')).body.countries).toEqual(['GB', 'FR']);
    const after = await page(s, '/console/requests?done=approved');
    expect(after.text).toContain('Approved: the key is changed');
    expect(after.text).not.toContain(`data-request-id="${requestId}"`);
    const again = await post(s, `/console/requests/${requestId}/decline`, `_csrf=${s.csrf}`);
    expect(again.status).toBe(409);
    expect(await again.text()).toContain('already approved');
    const approvedList = await page(s, '/console/requests?status=approved');
    expect(approvedList.text).toContain(`data-request-id="${requestId}"`);
    expect((await page(s, '/console/requests?status=bogus')).status).toBe(400);
    expect((await page(s, '/console/accounts/acme')).text).toContain(`data-request-id="${requestId}"`);
    const audit = await page(s, '/console/audit');
    expect(audit.text).toContain('account <a href="/console/accounts/acme">acme</a>');
  });
});

describe('accounts from the keys file', () => {
  test('listed read-only with their keys', async () => {
    const s = await signIn(fileAdminUrl, TOKENS.admin);
    const list = await page(s, '/console/accounts');
    expect(list.text).toContain('data-account-id="filed"');
    expect(list.text).toContain('Read-only here');
    expect((await page(s, '/console/accounts/filed')).text).toContain('data-key-id="filed-key"');
    expect((await page(s, '/console/keys/filed-key')).text).toMatch(/<dd id="key-account"><a href="\/console\/accounts\/filed">filed<\/a><\/dd>/);
    expect((await page(s, '/console/requests')).status).toBe(404);
  });

  test('a bad accounts: list stops start-up with one line naming file, entry and field', async () => {
    const bad = writeTempFile('bad-accounts.yaml', 'accounts:\n  - id: broken\n    name: Broken\n    emails: [not-an-address]\nkeys: []\n', dir);
    const result = await runToExit('gateway/main.js', gatewayEnv(bad, writeGatewayConfig(undefined, dir)));
    expect(result.code).toBe(1);
    const lines = result.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(`${bad}: accounts[0] (id broken): field "emails[0]"`);
    const unknown = writeTempFile('unknown-account.yaml', `${keysFileText([{ id: 'k', value: randomKeyValue('u'), tier: 'standard', countries: ['GB'], address: '127.0.0.1', status: 'active' }]).replace('    status: active\n', '    status: active\n    account: ghost\n')}`, dir);
    const second = await runToExit('gateway/main.js', gatewayEnv(unknown, writeGatewayConfig(undefined, dir)));
    expect(second.code).toBe(1);
    expect(second.stderr.trim()).toContain('keys[0] (id k): field "account": no account "ghost"');
  });
});
