/**
 * The role a change needs is decided by what it does, on a real gateway and redis-server, through
 * the admin API and the console: an `operator` may change a key's terms and an account's name, but
 * putting a key into an account, adding an email to an account (both hand keys to a portal holder,
 * who can roll them) and opening a key to every address however the ranges are written are the
 * `admin`'s. Taking access away (a key out of an account, an email removed, narrower ranges) stays
 * the operator's.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fixtureListings } from '../fixtures/listings';
import { adminCall, readyAdminUrl } from '../kit/admin-api';
import { makeTempDir, removeTempDirs, sha256Hex, startBackend, startGateway, writeGatewayConfig, writeKeysFile, writeListingsFile, type Proc } from '../kit/gateway-stack';
import { startRedis, type RedisServer } from '../kit/redis-server';

jest.setTimeout(60_000);

const TOKENS = { operator: 'operator-token-for-role-by-effect-0123456789', admin: 'admin-token-for-role-by-effect-0123456789' };

let redisServer: RedisServer;
let backend: Proc;
let gateway: Proc;
let adminUrl: string;

const as = (role: keyof typeof TOKENS, method: string, url: string, body?: unknown) => adminCall(adminUrl, TOKENS[role], method, url, body);
const key = async (id: string): Promise<Record<string, unknown>> => (await as('admin', 'GET', `/admin/keys/${id}`)).body;

beforeAll(async () => {
  redisServer = await startRedis();
  backend = await startBackend(writeListingsFile(fixtureListings()));
  const dir = makeTempDir();
  const tokensFile = path.join(dir, 'operators.yaml');
  fs.writeFileSync(tokensFile, (['operator', 'admin'] as const).map((role) => `- name: ${role}-1\n  token_sha256: ${sha256Hex(TOKENS[role])}\n  role: ${role}\n`).join(''));
  gateway = await startGateway({
    backendUrl: backend.url, keysFile: writeKeysFile([], dir), gatewayConfig: writeGatewayConfig(undefined, dir),
    env: { REDIS_URL: redisServer.url, KEY_STORE: 'redis', ADMIN_PORT: '0', ADMIN_TOKENS_FILE: tokensFile },
  });
  adminUrl = await readyAdminUrl(gateway, TOKENS.admin);
  for (const id of ['acme', 'other']) expect((await as('admin', 'POST', '/admin/accounts', { id, name: id, emails: [`ops@${id}.example`] })).status).toBe(201);
  expect((await as('admin', 'POST', '/admin/keys', { id: 'loose', tier: 'standard', countries: ['GB'], address: '10.0.0.1' })).status).toBe(201);
  expect((await as('admin', 'POST', '/admin/keys', { id: 'held', tier: 'standard', countries: ['GB'], address: '10.0.0.1', account: 'acme' })).status).toBe(201);
});

afterAll(async () => {
  await gateway?.stop();
  await backend?.stop();
  await redisServer?.stop();
  removeTempDirs();
});

const forbidden = (answer: { status: number; body: Record<string, unknown> }, what: RegExp): void => {
  expect({ status: answer.status, error: answer.body.error }).toEqual({ status: 403, error: 'forbidden' });
  expect(String(answer.body.message)).toMatch(what);
  expect(String(answer.body.message)).toContain('"admin"');
};

test('an operator cannot put a key into an account or move it to another; an admin can; taking it out is the operator\'s', async () => {
  forbidden(await as('operator', 'PATCH', '/admin/keys/loose', { account: 'acme' }), /account/);
  forbidden(await as('operator', 'PATCH', '/admin/keys/held', { account: 'other' }), /account/);
  // The same field with a change that hands nothing out is fine, and so is the key's current account.
  expect((await as('operator', 'PATCH', '/admin/keys/held', { account: 'acme', tier: 'advanced' })).status).toBe(200);
  expect(await key('loose')).not.toHaveProperty('account');
  expect(await key('held')).toMatchObject({ account: 'acme' });
  expect((await as('operator', 'PATCH', '/admin/keys/held', { account: null })).status).toBe(200);
  expect(await key('held')).not.toHaveProperty('account');
  expect((await as('admin', 'PATCH', '/admin/keys/held', { account: 'acme' })).status).toBe(200);
  expect(await key('held')).toMatchObject({ account: 'acme' });
});

test('an operator cannot add an email to an account (its holder could sign in and roll the keys); removing one or renaming is fine', async () => {
  forbidden(await as('operator', 'PATCH', '/admin/accounts/acme', { emails: ['ops@acme.example', 'thief@evil.example'] }), /email/);
  forbidden(await as('operator', 'PATCH', '/admin/accounts/acme', { emails: ['thief@evil.example'] }), /email/);
  expect((await as('admin', 'GET', '/admin/accounts/acme')).body).toMatchObject({ emails: ['ops@acme.example'] });
  expect((await as('operator', 'PATCH', '/admin/accounts/acme', { name: 'Acme Estates', emails: ['OPS@acme.example'] })).status).toBe(200);
  expect((await as('admin', 'PATCH', '/admin/accounts/acme', { emails: ['ops@acme.example', 'desk@acme.example'] })).status).toBe(200);
  expect((await as('operator', 'PATCH', '/admin/accounts/acme', { emails: ['desk@acme.example'] })).status).toBe(200);
  expect((await as('admin', 'GET', '/admin/accounts/acme')).body).toMatchObject({ name: 'Acme Estates', emails: ['desk@acme.example'] });
});

test('every address without "any": ranges wider than a /8 of IPv4 or a /32 of IPv6 need an admin, however they are written', async () => {
  for (const addresses of [
    ['0.0.0.0/1', '128.0.0.0/1', '::/1', '8000::/1'],
    ['0.0.0.0/1', '128.0.0.0/2', '192.0.0.0/3', '224.0.0.0/4'],
    ['10.0.0.0/8', '11.0.0.0/8'],
    ['10.0.0.0/7'],
    ['2001:db8::/31'],
    ['any'],
  ]) forbidden(await as('operator', 'PATCH', '/admin/keys/loose', { addresses }), /every IPv[46]/);
  expect(await key('loose')).toMatchObject({ address: '10.0.0.1' });
  // A /8 and a /32 are a network's: the operator's.
  expect((await as('operator', 'PATCH', '/admin/keys/loose', { addresses: ['10.0.0.0/8', '10.1.0.0/16', '2001:db8::/32'] })).status).toBe(200);
  expect((await as('admin', 'PATCH', '/admin/keys/loose', { addresses: ['0.0.0.0/1', '128.0.0.0/1'] })).status).toBe(200);
  // Once an admin opened IPv4, an operator may reshape it, but not open IPv6 as well.
  expect((await as('operator', 'PATCH', '/admin/keys/loose', { addresses: ['0.0.0.0/2', '64.0.0.0/2', '128.0.0.0/1'] })).status).toBe(200);
  forbidden(await as('operator', 'PATCH', '/admin/keys/loose', { addresses: ['0.0.0.0/1', '128.0.0.0/1', '::/2'] }), /every IPv6/);
  expect((await as('operator', 'PATCH', '/admin/keys/loose', { address: '10.0.0.1' })).status).toBe(200);
});

test('the console decides the same way: an operator\'s form opening a key to every address is 403, a narrow one is saved', async () => {
  const base = new URL(adminUrl).origin;
  const res = await fetch(`${base}/console/sign-in`, { method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: `token=${TOKENS.operator}` });
  expect(res.status).toBe(303);
  const cookie = res.headers.get('set-cookie')!.split(';')[0]!;
  const keysPage = await (await fetch(`${base}/console/keys`, { headers: { cookie } })).text();
  const csrf = /name="_csrf" value="([^"]+)"/.exec(keysPage)![1]!;
  const post = (address: string) => fetch(`${base}/console/keys/loose/set`, {
    method: 'POST', redirect: 'manual', headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' }, body: `_csrf=${encodeURIComponent(csrf)}&address=${encodeURIComponent(address)}`,
  });
  for (const address of ['any', '0.0.0.0/1 128.0.0.0/1']) expect({ address, status: (await post(address)).status }).toEqual({ address, status: 403 });
  expect(await key('loose')).toMatchObject({ address: '10.0.0.1' });
  expect((await post('10.0.0.2')).status).toBe(303);
  expect(await key('loose')).toMatchObject({ address: '10.0.0.2' });
});
