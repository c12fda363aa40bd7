/**
 * Holder accounts (docs/portal.md) against a real gateway and redis-server: /admin/accounts with
 * its roles, paging, bad input and audit; the `account` field of keys (an unknown account refused,
 * key_ids, delete refused while named); the CLI's `keys account …` and `--account`; one-time links
 * (hash only stored, redeemed once); export/import carrying accounts exactly.
 */
import fs from 'node:fs';
import path from 'node:path';
import Redis from 'ioredis';
import { fixtureListings } from '../fixtures/listings';
import { adminCall, readyAdminUrl } from '../kit/admin-api';
import { runKeysCli } from '../kit/keys-cli';
import { makeTempDir, removeTempDirs, sha256Hex, startBackend, startGateway, writeGatewayConfig, writeKeysFile, writeListingsFile, type Proc } from '../kit/gateway-stack';
import { startRedis, type RedisServer } from '../kit/redis-server';
import { createRedisLinkTokens } from '../../gateway/accounts/link-tokens';
import { createRedisAccountStore } from '../../gateway/accounts/redis-account-store';

jest.setTimeout(60_000);

const TOKENS = { viewer: 'viewer-token-for-accounts-0123456789', operator: 'operator-token-for-accounts-0123456789', admin: 'admin-token-for-accounts-0123456789' };
const NAMES = { viewer: 'vera', operator: 'otto', admin: 'ada' };

let redis: RedisServer;
let client: Redis;
let backend: Proc;
let gateway: Proc;
let adminUrl: string;
let dir: string;
let gatewayConfig: string;

const call = (method: string, url: string, token: string, body?: unknown) => adminCall(adminUrl, token, method, url, body);
const cli = (...args: string[]) => runKeysCli(redis.url, args, { GATEWAY_CONFIG: gatewayConfig });

beforeAll(async () => {
  redis = await startRedis();
  client = new Redis(redis.url);
  backend = await startBackend(writeListingsFile(fixtureListings()));
  dir = makeTempDir();
  const tokensFile = path.join(dir, 'operators.yaml');
  fs.writeFileSync(tokensFile, (Object.keys(TOKENS) as Array<keyof typeof TOKENS>).map((role) => `- name: ${NAMES[role]}\n  token_sha256: ${sha256Hex(TOKENS[role])}\n  role: ${role}\n`).join(''));
  gatewayConfig = writeGatewayConfig(undefined, dir);
  gateway = await startGateway({
    backendUrl: backend.url,
    keysFile: writeKeysFile([], dir),
    gatewayConfig,
    env: { REDIS_URL: redis.url, KEY_STORE: 'redis', ADMIN_PORT: '0', ADMIN_TOKENS_FILE: tokensFile },
  });
  adminUrl = await readyAdminUrl(gateway, TOKENS.viewer);
});

afterAll(async () => {
  await gateway?.stop();
  await backend?.stop();
  client?.disconnect();
  await redis?.stop();
  removeTempDirs();
});

const acme = { id: 'acme', name: 'Acme Estates', emails: ['Ops@Acme.example', 'billing@acme.example'], billing_customer: 'cus_123' };

describe('/admin/accounts', () => {
  test('create needs admin; the answer lower-cases the emails; the audit log names the operator', async () => {
    expect((await call('POST', '/admin/accounts', TOKENS.viewer, acme)).status).toBe(403);
    expect((await call('POST', '/admin/accounts', TOKENS.operator, acme)).status).toBe(403);
    const created = await call('POST', '/admin/accounts', TOKENS.admin, acme);
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ id: 'acme', name: 'Acme Estates', emails: ['ops@acme.example', 'billing@acme.example'], billing_customer: 'cus_123' });
    expect(Date.parse(created.body.created_at)).not.toBeNaN();
    expect((await call('POST', '/admin/accounts', TOKENS.admin, acme)).body.error).toBe('conflict');
    const audit = await call('GET', '/admin/audit?limit=20', TOKENS.viewer);
    const entry = audit.body.entries.find((e: { action: string }) => e.action === 'account.create');
    expect(entry).toMatchObject({ actor: 'ada', channel: 'admin_api', account_id: 'acme', key_id: '' });
    expect(entry.changes.emails).toEqual({ before: null, after: ['ops@acme.example', 'billing@acme.example'] });
  });

  test('an email another account lists is 409 conflict, compared case-insensitively', async () => {
    const taken = await call('POST', '/admin/accounts', TOKENS.admin, { id: 'copycat', name: 'Copy', emails: ['OPS@acme.EXAMPLE'] });
    expect(taken.status).toBe(409);
    expect(taken.body.error).toBe('conflict');
    expect((await call('GET', '/admin/accounts/copycat', TOKENS.viewer)).status).toBe(404);
  });

  test.each([
    [{ id: 'bad id', name: 'x', emails: ['a@b.example'] }, 'id'],
    [{ id: 'no-emails', name: 'x', emails: [] }, 'emails'],
    [{ id: 'eleven', name: 'x', emails: Array.from({ length: 11 }, (_, i) => `u${i}@b.example`) }, 'emails'],
    [{ id: 'not-email', name: 'x', emails: ['not an address'] }, 'emails'],
    [{ id: 'no-name', name: '', emails: ['a@b.example'] }, 'name'],
    [{ id: 'extra', name: 'x', emails: ['a@b.example'], note: 'y' }, 'body'],
  ])('bad input %j is 400 invalid_parameter naming %s', async (body, parameter) => {
    const answer = await call('POST', '/admin/accounts', TOKENS.admin, body);
    expect(answer.status).toBe(400);
    expect(answer.body).toMatchObject({ error: 'invalid_parameter', parameter });
  });

  test('change needs operator; billing_customer null removes it; audited as account.update', async () => {
    expect((await call('PATCH', '/admin/accounts/acme', TOKENS.viewer, { name: 'x' })).status).toBe(403);
    const changed = await call('PATCH', '/admin/accounts/acme', TOKENS.operator, { name: 'Acme Homes', billing_customer: null });
    expect(changed.status).toBe(200);
    expect(changed.body.name).toBe('Acme Homes');
    expect(changed.body.billing_customer).toBeUndefined();
    const audit = await call('GET', '/admin/audit?limit=5', TOKENS.viewer);
    expect(audit.body.entries[0]).toMatchObject({ action: 'account.update', actor: 'otto', account_id: 'acme', changes: { name: { before: 'Acme Estates', after: 'Acme Homes' } } });
    expect((await call('PATCH', '/admin/accounts/nobody', TOKENS.operator, { name: 'x' })).status).toBe(404);
  });

  test('the list is paged in id order with next_cursor; a forged cursor is 400', async () => {
    for (const id of ['page-a', 'page-b', 'page-c']) expect((await call('POST', '/admin/accounts', TOKENS.admin, { id, name: id, emails: [`${id}@x.example`] })).status).toBe(201);
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: Awaited<ReturnType<typeof call>> = await call('GET', `/admin/accounts?limit=2${cursor ? `&cursor=${cursor}` : ''}`, TOKENS.viewer);
      expect(page.status).toBe(200);
      expect(page.body.accounts.length).toBeLessThanOrEqual(2);
      seen.push(...page.body.accounts.map((a: { id: string }) => a.id));
      cursor = page.body.next_cursor;
    } while (cursor);
    expect(seen).toEqual([...seen].sort());
    expect(seen).toEqual(expect.arrayContaining(['acme', 'page-a', 'page-b', 'page-c']));
    expect((await call('GET', '/admin/accounts?cursor=forged', TOKENS.viewer)).body).toMatchObject({ error: 'invalid_parameter', parameter: 'cursor' });
    expect((await call('GET', '/admin/accounts?limit=0', TOKENS.viewer)).body).toMatchObject({ error: 'invalid_parameter', parameter: 'limit' });
    const put = await call('PUT', '/admin/accounts/acme', TOKENS.admin, {});
    expect(put.status).toBe(405);
    expect(put.headers.get('allow')).toBe('GET, PATCH, DELETE');
    expect((await call('GET', '/admin/accounts/acme/keys', TOKENS.viewer)).status).toBe(404);
  });
});

describe('the Redis account store (as the portal uses it)', () => {
  test('findByEmail folds ASCII case only and follows changes; a released address can be taken', async () => {
    const store = createRedisAccountStore(client as never);
    expect((await store.findByEmail('OPS@ACME.example'))?.id).toBe('acme');
    // Compared as written apart from A-Z: spaces are part of the string (docs/holder-identity-and-races.md).
    expect(await store.findByEmail('  OPS@ACME.example ')).toBeUndefined();
    await store.create({ id: 'mover', name: 'Mover', emails: ['old@mover.example'] });
    await store.update('mover', { emails: ['New@Mover.example'] });
    expect(await store.findByEmail('old@mover.example')).toBeUndefined();
    expect((await store.findByEmail('new@mover.example'))?.id).toBe('mover');
    await expect(store.create({ id: 'thief', name: 'Thief', emails: ['new@mover.example'] })).rejects.toMatchObject({ code: 'conflict' });
    await store.delete('mover');
    expect(await store.findByEmail('new@mover.example')).toBeUndefined();
    expect((await store.create({ id: 'heir', name: 'Heir', emails: ['new@mover.example'] })).emails).toEqual(['new@mover.example']);
    expect((await store.findByEmail('new@mover.example'))?.id).toBe('heir');
    await store.delete('heir');
  });
});

describe('the account field of a key', () => {
  test('an unknown account is 400 naming account; a known one is shown, listed in key_ids, and blocks delete', async () => {
    const unknown = await call('POST', '/admin/keys', TOKENS.admin, { id: 'k-unknown', tier: 'standard', countries: ['GB'], address: '127.0.0.1', account: 'ghost' });
    expect(unknown.status).toBe(400);
    expect(unknown.body).toMatchObject({ error: 'invalid_parameter', parameter: 'account' });
    expect((await call('POST', '/admin/keys', TOKENS.admin, { id: 'k-acme', tier: 'standard', countries: ['GB'], address: '127.0.0.1', account: 'page-a' })).status).toBe(201);
    expect((await call('GET', '/admin/keys/k-acme', TOKENS.viewer)).body.account).toBe('page-a');
    expect((await call('GET', '/admin/accounts/page-a', TOKENS.viewer)).body.key_ids).toEqual(['k-acme']);
    const refused = await call('DELETE', '/admin/accounts/page-a', TOKENS.admin);
    expect(refused.status).toBe(409);
    expect(refused.body.message).toContain('k-acme');
    // Moved to another account (an admin's act: its holders could roll the key): the first has no key left and may go.
    expect((await call('PATCH', '/admin/keys/k-acme', TOKENS.operator, { account: 'page-b' })).status).toBe(403);
    expect((await call('PATCH', '/admin/keys/k-acme', TOKENS.admin, { account: 'page-b' })).body.account).toBe('page-b');
    expect((await call('GET', '/admin/accounts/page-a', TOKENS.viewer)).body.key_ids).toEqual([]);
    expect((await call('DELETE', '/admin/accounts/page-a', TOKENS.operator)).status).toBe(403);
    expect((await call('DELETE', '/admin/accounts/page-a', TOKENS.admin)).status).toBe(204);
    expect((await call('GET', '/admin/accounts/page-a', TOKENS.viewer)).status).toBe(404);
    const cleared = await call('PATCH', '/admin/keys/k-acme', TOKENS.operator, { account: null });
    expect(cleared.body.account).toBeUndefined();
    expect((await call('GET', '/admin/accounts/page-b', TOKENS.viewer)).body.key_ids).toEqual([]);
    expect((await call('PATCH', '/admin/keys/k-acme', TOKENS.operator, { account: 'ghost' })).body).toMatchObject({ error: 'invalid_parameter', parameter: 'account' });
  });
});

describe('keys account … (CLI)', () => {
  test('create, show, set, list, delete; --account on create; one line on a mistake', async () => {
    const created = await cli('account', 'create', 'cli-acct', '--name', 'CLI Holder', '--email', 'One@CLI.example', '--email', 'two@cli.example', '--billing-customer', 'c-9');
    expect(created.code).toBe(0);
    expect(JSON.parse(created.stdout)).toMatchObject({ id: 'cli-acct', emails: ['one@cli.example', 'two@cli.example'], billing_customer: 'c-9' });
    const key = await cli('create', '--id', 'cli-key', '--tier', 'standard', '--countries', 'GB', '--addresses', '127.0.0.1', '--account', 'cli-acct');
    expect(key.code).toBe(0);
    expect(JSON.parse((await cli('account', 'show', 'cli-acct')).stdout).key_ids).toEqual(['cli-key']);
    const set = await cli('account', 'set', 'cli-acct', '--email', 'three@cli.example', '--billing-customer', '');
    expect(JSON.parse(set.stdout)).toMatchObject({ emails: ['three@cli.example'] });
    expect(JSON.parse(set.stdout).billing_customer).toBeUndefined();
    const listed = JSON.parse((await cli('account', 'list', '--limit', '1000')).stdout);
    expect(listed.accounts.map((a: { id: string }) => a.id)).toContain('cli-acct');
    const refused = await cli('account', 'delete', 'cli-acct');
    expect(refused.code).toBe(1);
    expect(refused.stderr.trim().split('\n')).toHaveLength(1);
    expect(refused.stderr).toContain('cli-key');
    const unknown = await cli('create', '--id', 'cli-key-2', '--tier', 'standard', '--countries', 'GB', '--addresses', '127.0.0.1', '--account', 'nope');
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('account');
    const audit = await call('GET', '/admin/audit?limit=10', TOKENS.viewer);
    expect(audit.body.entries.find((e: { action: string; account_id?: string }) => e.action === 'account.update' && e.account_id === 'cli-acct')).toMatchObject({ channel: 'cli' });
    const cleared = await cli('set', 'cli-key', '--account', '');
    expect(JSON.parse(cleared.stdout).account).toBeUndefined();
    expect(JSON.parse((await cli('account', 'show', 'cli-acct')).stdout).key_ids).toEqual([]);
    expect(JSON.parse((await cli('set', 'cli-key', '--account', 'cli-acct')).stdout).account).toBe('cli-acct');
    const badSub = await cli('account', 'frobnicate', 'x');
    expect(badSub.code).toBe(1);
    expect(badSub.stderr).toContain('unknown sub-command');
  });

  test('link: refused without PORTAL_PUBLIC_URL; prints the link; only the hash is stored; redeemed once', async () => {
    const refused = await cli('account', 'link', 'acme');
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('PORTAL_PUBLIC_URL');
    const out = await runKeysCli(redis.url, ['account', 'link', 'acme', '--minutes', '5'], { GATEWAY_CONFIG: gatewayConfig, PORTAL_PUBLIC_URL: 'https://portal.example.com/' });
    expect(out.code).toBe(0);
    const link = out.stdout.trim().split('\n').pop()!;
    const match = /^https:\/\/portal\.example\.com\/portal\/link\/([A-Za-z0-9_-]{43})$/.exec(link);
    expect(match).not.toBeNull();
    const token = match![1]!;
    const stored = await client.keys('lgw:portal:link:*');
    expect(stored).toContain(`lgw:portal:link:${sha256Hex(token)}`);
    for (const k of await client.keys('*')) {
      if ((await client.type(k)) === 'string') expect(await client.get(k)).not.toContain(token);
    }
    const ttl = await client.ttl(`lgw:portal:link:${sha256Hex(token)}`);
    expect(ttl).toBeGreaterThan(200);
    expect(ttl).toBeLessThanOrEqual(300);
    const tokens = createRedisLinkTokens(client as never);
    expect(await tokens.redeem(token)).toBe('acme');
    expect(await tokens.redeem(token)).toBeUndefined();
    const byDefault = await runKeysCli(redis.url, ['account', 'link', 'acme'], { GATEWAY_CONFIG: gatewayConfig, PORTAL_PUBLIC_URL: 'https://portal.example.com' });
    const defaultToken = byDefault.stdout.trim().split('\n').pop()!.split('/').pop()!;
    const defaultTtl = await client.ttl(`lgw:portal:link:${sha256Hex(defaultToken)}`);
    expect(defaultTtl).toBeGreaterThan(800);
    expect(defaultTtl).toBeLessThanOrEqual(900);
    const tooLong = await runKeysCli(redis.url, ['account', 'link', 'acme', '--minutes', '61'], { GATEWAY_CONFIG: gatewayConfig, PORTAL_PUBLIC_URL: 'https://portal.example.com' });
    expect(tooLong.code).toBe(1);
    expect(tooLong.stderr).toContain('minutes');
    const unknown = await runKeysCli(redis.url, ['account', 'link', 'ghost'], { GATEWAY_CONFIG: gatewayConfig, PORTAL_PUBLIC_URL: 'https://portal.example.com' });
    expect(unknown.code).toBe(1);
  });
});

describe('export and import carry accounts', () => {
  test('an export restored into an empty store exports the same file', async () => {
    const first = path.join(dir, 'export-1.yaml');
    const second = path.join(dir, 'export-2.yaml');
    const exported = await cli('export', first);
    expect(exported.code).toBe(0);
    expect(exported.stdout).toMatch(/and \d+ accounts/);
    const text = fs.readFileSync(first, 'utf8');
    expect(text).toContain('accounts:');
    expect(text).toContain('account: cli-acct');
    await client.flushall();
    const imported = await cli('import', first);
    expect(imported.code).toBe(0);
    expect(imported.stdout).toContain('cli-acct');
    expect((await cli('export', second)).code).toBe(0);
    const body = (file: string) => fs.readFileSync(file, 'utf8').split('\n').slice(1).join('\n');
    expect(body(second)).toBe(body(first));
    const show = JSON.parse((await cli('account', 'show', 'cli-acct')).stdout);
    expect(show.key_ids).toEqual(['cli-key']);
    expect((await cli('account', 'show', 'acme')).stdout).toContain('ops@acme.example');
  });

  test('keys validate checks the accounts list as the gateway does', async () => {
    const good = path.join(dir, 'export-1.yaml');
    const ok = await runKeysCli(redis.url, ['validate', good], {});
    expect(ok.code).toBe(0);
    expect(ok.stdout).toMatch(/, \d+ accounts\n$/);
    const bad = path.join(dir, 'bad-account-ref.yaml');
    fs.writeFileSync(bad, fs.readFileSync(good, 'utf8').replace('account: cli-acct', 'account: ghost'));
    const refused = await runKeysCli(redis.url, ['validate', bad], {});
    expect(refused.code).toBe(1);
    expect(refused.stderr.trim()).toContain('field "account": no account "ghost"');
  });

  test('a file whose keys are invalid writes no account', async () => {
    const bad = path.join(dir, 'bad-import.yaml');
    fs.writeFileSync(bad, 'accounts:\n  - id: fresh\n    name: Fresh\n    emails: [fresh@x.example]\nkeys:\n  - id: broken\n');
    const result = await cli('import', bad);
    expect(result.code).toBe(1);
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
    expect(await client.exists('lgw:account:fresh')).toBe(0);
  });
});
