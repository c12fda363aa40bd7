/**
 * Pause reasons through the admin API, the CLI and a running gateway on Redis: account-level pause
 * and settle (role `operator`; viewer 403; unknown account 404; one audit entry per key changed;
 * the answer lists every key), `settle {"reason"}` and its 409 for `leaked`, `keys settle --reason`,
 * `keys account pause|settle`, the keys-file commands with the set, and the gateway's 403
 * `key_paused` (logged with every reason) until every reason is settled. Every admin answer is
 * checked against openapi/admin.yaml.
 */
import fs from 'node:fs';
import path from 'node:path';
import { adminCall, readyAdminUrl } from '../kit/admin-api';
import { eventually, getWithKey, keysFileText, makeTempDir, removeTempDirs, sha256Hex } from '../kit/gateway-stack';
import { accessLines } from '../kit/log-lines';
import { runKeysCli, runKeysCliWith } from '../kit/keys-cli';
import { startRedisStack, type RedisStack } from '../kit/redis-stack';

jest.setTimeout(60_000);

const TOKENS = { ada: 'ada-admin-token-for-pause-tests-0123', otto: 'otto-operator-token-for-pause-tests', vera: 'vera-viewer-token-for-pause-tests-01' };

let stack: RedisStack;
let adminUrl: string;
const values: Record<string, string> = {};

const call = (method: string, url: string, token: string, body?: unknown) => adminCall(adminUrl, token, method, url, body);
const cli = (args: string[]) => runKeysCli(stack.redisServer.url, args, { GATEWAY_CONFIG: stack.gatewayConfig });
const auditLength = (): Promise<number> => stack.redis.xlen('lgw:audit');
const statusOf = async (id: string): Promise<number> => (await getWithKey(stack.url, '/v1/ping', values[id]!)).status;

beforeAll(async () => {
  const tokensFile = path.join(makeTempDir(), 'operators.yaml');
  fs.writeFileSync(tokensFile, [['ada', 'admin'], ['otto', 'operator'], ['vera', 'viewer']]
    .map(([name, role]) => `- name: ${name}\n  token_sha256: ${sha256Hex(TOKENS[name as keyof typeof TOKENS])}\n  role: ${role}\n`).join(''));
  stack = await startRedisStack({ gateways: [{ ADMIN_PORT: '0', ADMIN_TOKENS_FILE: tokensFile }] });
  adminUrl = await readyAdminUrl(stack.gateway, TOKENS.vera);
  expect((await call('POST', '/admin/accounts', TOKENS.ada, { id: 'acme', name: 'Acme', emails: ['billing@acme.example'] })).status).toBe(201);
  for (const [id, account] of [['acme-a', 'acme'], ['acme-b', 'acme'], ['solo', undefined]] as const) {
    const created = await call('POST', '/admin/keys', TOKENS.ada, { id, tier: 'standard', countries: ['GB'], address: '127.0.0.1', ...(account ? { account } : {}) });
    expect(created.status).toBe(201);
    values[id] = created.body.key;
  }
}, 90_000);

afterAll(async () => {
  await stack?.stop();
  removeTempDirs();
});

describe('account-level pause and settle over the admin API', () => {
  it('a viewer is 403, an unknown account 404, a bad reason 400; nothing is written', async () => {
    const before = await auditLength();
    expect((await call('POST', '/admin/accounts/acme/pause', TOKENS.vera, { reason: 'unpaid_renewal' })).status).toBe(403);
    expect((await call('POST', '/admin/accounts/acme/settle', TOKENS.vera, {})).status).toBe(403);
    expect((await call('POST', '/admin/accounts/nobody/pause', TOKENS.otto, { reason: 'unpaid_renewal' })).body).toMatchObject({ error: 'not_found' });
    expect((await call('POST', '/admin/accounts/acme/pause', TOKENS.otto, { reason: 'bankrupt' })).body).toMatchObject({ error: 'invalid_parameter', parameter: 'reason' });
    expect((await call('POST', '/admin/accounts/acme/pause', TOKENS.otto, {})).body).toMatchObject({ error: 'invalid_parameter', parameter: 'reason' });
    expect((await call('GET', '/admin/accounts/acme/pause', TOKENS.otto)).status).toBe(405);
    expect((await call('POST', '/admin/accounts/acme/pause', TOKENS.otto, { reason: 'unpaid_renewal', invoice: 'x' })).body).toMatchObject({ error: 'invalid_parameter', message: expect.stringContaining('invoice') });
    expect(await auditLength()).toBe(before);
  });

  it('an operator pauses every key of the account: one audit entry per key changed, none the second time; the gateway answers 403 key_paused', async () => {
    const before = await auditLength();
    const paused = await call('POST', '/admin/accounts/acme/pause', TOKENS.otto, { reason: 'unpaid_renewal', billing_invoice_url: 'https://billing.example/invoices/42' });
    expect(paused.status).toBe(200);
    expect(paused.body).toEqual({
      account: 'acme',
      keys: [
        { id: 'acme-a', status: 'paused', pause_reasons: ['unpaid_renewal'], changed: true, added: ['unpaid_renewal'] },
        { id: 'acme-b', status: 'paused', pause_reasons: ['unpaid_renewal'], changed: true, added: ['unpaid_renewal'] },
      ],
    });
    expect(await auditLength()).toBe(before + 2);
    const again = await call('POST', '/admin/accounts/acme/pause', TOKENS.otto, { reason: 'unpaid_renewal' });
    expect(again.body.keys.map((k: { changed: boolean }) => k.changed)).toEqual([false, false]);
    expect(await auditLength()).toBe(before + 2);
    const entry = (await call('GET', '/admin/audit?key_id=acme-a&limit=1', TOKENS.vera)).body.entries[0];
    expect(entry).toMatchObject({ actor: 'otto', channel: 'admin_api', action: 'pause', changes: { pause_reasons: { before: null, after: ['unpaid_renewal'] } } });

    await eventually('acme-a refused', async () => (await statusOf('acme-a')) === 403);
    const refused = await getWithKey(stack.url, '/v1/ping', values['acme-a']!);
    expect(refused.body).toMatchObject({ error: 'key_paused' });
    expect(await statusOf('solo')).toBe(200);
  });

  it('a dispute on top keeps the keys paused until both are settled; settling leaked is 409', async () => {
    await call('POST', '/admin/keys/acme-a/pause', TOKENS.otto, { reason: 'payment_dispute' });
    const view = (await call('GET', '/admin/keys/acme-a', TOKENS.vera)).body;
    expect(view).toMatchObject({ status: 'paused', pause_reasons: ['payment_dispute', 'unpaid_renewal'], pause_reason: 'payment_dispute', billing_invoice_url: 'https://billing.example/invoices/42' });
    await eventually('both reasons in the refusal\'s log line', async () => {
      await statusOf('acme-a');
      return accessLines(stack.gateway.output).some((l) => l.key_id === 'acme-a' && l.reason === 'paused_payment_dispute+unpaid_renewal');
    });

    const settled = await call('POST', '/admin/accounts/acme/settle', TOKENS.otto, { reason: 'unpaid_renewal' });
    expect(settled.body.keys).toEqual([
      { id: 'acme-a', status: 'paused', pause_reasons: ['payment_dispute'], changed: true, settled: ['unpaid_renewal'] },
      { id: 'acme-b', status: 'active', pause_reasons: [], changed: true, settled: ['unpaid_renewal'] },
    ]);
    await eventually('acme-b answered again', async () => (await statusOf('acme-b')) === 200);
    expect(await statusOf('acme-a')).toBe(403);
    expect((await call('POST', '/admin/accounts/acme/settle', TOKENS.otto, { reason: 'leaked' })).body).toMatchObject({ error: 'conflict' });
    expect((await call('POST', '/admin/keys/acme-a/settle', TOKENS.otto, { reason: 'payment_dispute' })).body).toMatchObject({ status: 'active' });
    await eventually('acme-a answered again', async () => (await statusOf('acme-a')) === 200);
  });

  it('settle of a key that leaked: 409 naming the roll, with or without a reason; a named payment reason goes', async () => {
    await call('POST', '/admin/keys/solo/pause', TOKENS.otto, { reason: 'leaked' });
    expect((await call('POST', '/admin/keys/solo/pause', TOKENS.otto, {})).body).toMatchObject({ error: 'invalid_parameter', parameter: 'reason' });
    await call('POST', '/admin/keys/solo/pause', TOKENS.otto, { reason: 'operator' });
    const refused = await call('POST', '/admin/keys/solo/settle', TOKENS.otto, {});
    expect(refused.status).toBe(409);
    expect(refused.body).toMatchObject({ error: 'conflict', message: expect.stringContaining('roll') });
    expect((await call('POST', '/admin/keys/solo/settle', TOKENS.otto, { reason: 'leaked' })).status).toBe(409);
    expect((await call('POST', '/admin/keys/solo/settle', TOKENS.otto, { reason: 'operator' })).body).toMatchObject({ status: 'paused', pause_reasons: ['leaked'] });
    const rolled = await call('POST', '/admin/keys/solo/roll', TOKENS.ada, { grace_seconds: 0 });
    values.solo = rolled.body.key;
    expect((await call('GET', '/admin/keys/solo', TOKENS.vera)).body.status).toBe('active');
    await eventually('solo answered with its new value', async () => (await statusOf('solo')) === 200);
  });
});

describe('the CLI', () => {
  it('keys settle --reason, keys account pause|settle', async () => {
    expect((await cli(['account', 'pause', 'acme', '--reason', 'payment_dispute'])).code).toBe(0);
    expect((await cli(['pause', 'acme-a', '--reason', 'unpaid_renewal'])).code).toBe(0);
    const one = await cli(['settle', 'acme-a', '--reason', 'payment_dispute']);
    expect(one.code).toBe(0);
    expect(JSON.parse(one.stdout)).toMatchObject({ status: 'paused', pause_reasons: ['unpaid_renewal'] });
    const all = await cli(['account', 'settle', 'acme']);
    expect(all.code).toBe(0);
    expect(JSON.parse(all.stdout)).toEqual({
      account: 'acme',
      keys: [
        { id: 'acme-a', status: 'active', pause_reasons: [], changed: true, settled: ['unpaid_renewal'] },
        { id: 'acme-b', status: 'active', pause_reasons: [], changed: true, settled: ['payment_dispute'] },
      ],
    });
    const missing = await cli(['account', 'pause', 'acme']);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('--reason is required');
    const entries = (await call('GET', '/admin/audit?key_id=acme-b&limit=2', TOKENS.vera)).body.entries;
    expect(entries.map((e: { channel: string; action: string }) => [e.channel, e.action])).toEqual([['cli', 'settle'], ['cli', 'pause']]);
  });

  it('keys pause|settle --file keep the set in a keys file, and leave the file alone when nothing changes', async () => {
    const file = path.join(makeTempDir(), 'keys.yaml');
    fs.writeFileSync(file, keysFileText([{ id: 'filed', value: 'filed-value', tier: 'standard', countries: ['GB'], address: '127.0.0.1', status: 'paused', pause_reason: 'unpaid_renewal' }]));
    const env = { KEY_STORE: 'file', KEYS_FILE: file, GATEWAY_CONFIG: stack.gatewayConfig };
    const original = fs.readFileSync(file, 'utf8');
    expect((await runKeysCliWith(env, ['pause', 'filed', '--reason', 'unpaid_renewal'])).stdout).toContain('nothing changed');
    expect(fs.readFileSync(file, 'utf8')).toBe(original);
    expect((await runKeysCliWith(env, ['pause', 'filed', '--reason', 'leaked'])).code).toBe(0);
    expect(fs.readFileSync(file, 'utf8')).toMatch(/status: paused\n\s+pause_reasons: \[leaked, unpaid_renewal\]/);
    const refused = await runKeysCliWith(env, ['settle', 'filed']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('roll');
    expect((await runKeysCliWith(env, ['settle', 'filed', '--reason', 'unpaid_renewal'])).code).toBe(0);
    expect(fs.readFileSync(file, 'utf8')).toMatch(/status: paused\n\s+pause_reasons: \[leaked\]/);
    expect(fs.readFileSync(file, 'utf8')).not.toContain('pause_reason:');
  });
});
