/**
 * GitHub secret scanning against two real gateways on one redis-server (the default policy,
 * `end_value`), reports signed by a P-256 key pair made here and checked against a key list served
 * by a local server: a current value is confirmed and stops working on both instances within a
 * second while the key keeps its id, account and entitlements; the holder sees the leak in the
 * portal and rolls (no grace for the leaked value); a previous value in its grace is ended alone;
 * an unknown value, a value with a wrong checksum and a demo key are false positives that change
 * nothing; the same report twice is one audit entry and one webhook; no leaked value appears in any
 * log line or page.
 */
import { adminCall } from '../kit/admin-api';
import fs from 'node:fs';
import path from 'node:path';
import { getWithKey, makeTempDir, removeTempDirs, seenByAll, startGateway, withBadChecksum } from '../kit/gateway-stack';
import { match, postReport } from '../kit/github-reports';
import { runKeysCli } from '../kit/keys-cli';
import { ADMIN_TOKEN, startLeaksStack, type LeaksStack } from '../kit/leaks-stack';
import { holderFromLink, portalRequest, postAs } from '../kit/portal';
import { eventually } from '../kit/timing';
import { redisKeys } from '../../gateway/keys/redis-layout';

jest.setTimeout(90_000);

let s: LeaksStack;
/** Every value reported in this file: none may appear in a log line or a page. */
const reported: string[] = [];
const pages: string[] = [];

beforeAll(async () => {
  s = await startLeaksStack({ instances: 2 });
  await s.operator.accounts.create({ id: 'acme', name: 'Acme Ltd', emails: ['ops@acme.test'] });
}, 90_000);
afterAll(async () => {
  await s?.stop();
  removeTempDirs();
});

let posted = 0;
const report = async (values: string[], hook = s.hookUrls[0]!) => {
  reported.push(...values);
  posted++;
  return postReport(hook, values.map((v) => match(v)), s.github);
};
const show = async (id: string) => (await adminCall(s.adminUrl, ADMIN_TOKEN, 'GET', `/admin/keys/${id}`)).body as Record<string, unknown>;
const auditOf = async (id: string) => (await adminCall(s.adminUrl, ADMIN_TOKEN, 'GET', `/admin/audit?key_id=${id}`)).body.entries as Array<Record<string, unknown>>;
const pingAll = async (value: string) => Promise.all(s.publicUrls.map(async (u) => (await getWithKey(u, '/v1/ping', value)).status));

test('a current value: true_positive, 401 on both instances within a second, the key kept; the holder sees it and rolls', async () => {
  const value = await s.operator.key('acme-1', 'acme', { countries: ['GB', 'FR'], tier: 'advanced' });
  expect(await pingAll(value)).toEqual([200, 200]);
  const before = await show('acme-1');

  const answer = await report([value]);
  const since = Date.now();
  expect(answer.status).toBe(200);
  expect(answer.body).toEqual([{ token_raw: value, token_type: 'listings_gateway_api_key', label: 'true_positive' }]);
  await seenByAll(s.publicUrls, value, 401, since, 1000);
  expect((await getWithKey(s.publicUrls[1]!, '/v1/ping', value)).body.error).toBe('unauthenticated');

  const after = await show('acme-1');
  expect(after).toMatchObject({ id: 'acme-1', account: 'acme', tier: 'advanced', countries: before.countries, addresses: before.addresses, status: 'active', limits: before.limits });
  expect(after).toMatchObject({ leaked_at: expect.any(String), leak_url: 'https://github.com/acme/app/blob/main/.env', value_ended_at: expect.any(String) });
  const cli = JSON.parse((await runKeysCli(s.stack.redisServer.url, ['show', 'acme-1'])).stdout) as Record<string, unknown>;
  expect(cli).toMatchObject({ leaked_at: after.leaked_at, leak_url: after.leak_url, value_ended_at: after.value_ended_at });

  const [entry] = await auditOf('acme-1');
  expect(entry).toMatchObject({ actor: 'leaks:github', channel: 'leaks', action: 'leak' });
  expect(Object.keys(entry!.changes as object).sort()).toEqual(['leak_url', 'leaked_at', 'value_ended_at']);
  const event = await eventually('the key.leaked webhook', () => s.receiver.of('key.leaked', 'acme-1')[0]);
  expect(event.data).toEqual({ key_id: 'acme-1', account_id: 'acme', url: 'https://github.com/acme/app/blob/main/.env', action: 'end_value' });

  // The holder's page shows the leak and offers the roll.
  const holder = await holderFromLink(s.portalUrl, s.portalPublicUrl, await s.operator.links.issue('acme', 15));
  const page = await portalRequest(s.portalUrl, '/portal/keys/acme-1', { cookie: holder.cookie });
  pages.push(page.text);
  expect(page.text).toContain('id="key-leak"');
  expect(page.text).toContain('id="leak-roll"');
  expect(page.text).toContain('https://github.com/acme/app/blob/main/.env');
  // In the key's history too, named as GitHub's report.
  expect(page.text).toContain('GitHub secret scanning');
  const version = /id="key-leak"[\s\S]*?name="version" value="([^"]+)"/.exec(page.text)![1]!;
  const rolled = await postAs(holder, s.portalUrl, s.portalPublicUrl, '/portal/keys/acme-1/roll', { version });
  expect(rolled.status).toBe(201);
  const fresh = /id="key-value">([^<]+)</.exec(rolled.text)![1]!;
  expect(rolled.text).toContain('The previous value no longer works.');
  await seenByAll(s.publicUrls, fresh, 200, Date.now());
  expect(await pingAll(value)).toEqual([401, 401]);
  const cleared = await show('acme-1');
  for (const field of ['leaked_at', 'leak_url', 'value_ended_at', 'previous_key_valid_until']) expect(cleared).not.toHaveProperty(field);
  expect(cleared).toMatchObject({ id: 'acme-1', account: 'acme', tier: 'advanced', status: 'active' });
  const afterRoll = await portalRequest(s.portalUrl, '/portal/keys/acme-1', { cookie: holder.cookie });
  pages.push(afterRoll.text);
  expect(afterRoll.text).not.toContain('id="key-leak"');
});

test('the console shows the leak and offers the roll', async () => {
  const value = await s.operator.key('acme-console', 'acme');
  expect((await report([value], s.hookUrls[1]!)).body[0].label).toBe('true_positive');
  const signIn = await fetch(`${s.adminUrl}/console/sign-in`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: `token=${encodeURIComponent(ADMIN_TOKEN)}`, redirect: 'manual' });
  const cookie = signIn.headers.getSetCookie()[0]!.split(';')[0]!;
  const page = await (await fetch(`${s.adminUrl}/console/keys/acme-console`, { headers: { cookie } })).text();
  pages.push(page);
  expect(page).toContain('id="key-leak"');
  expect(page).toContain('href="/console/keys/acme-console/confirm/roll" id="leak-roll"');
  const list = await (await fetch(`${s.adminUrl}/console/keys`, { headers: { cookie } })).text();
  pages.push(list);
  expect(list).toMatch(/acme-console[\s\S]*?reported leaked/);
});

test('a previous value in its grace: ended too; the current one keeps working', async () => {
  const old = await s.operator.key('acme-2', 'acme');
  const { key: current } = await s.operator.admin.roll('acme-2', 3600);
  expect(await pingAll(old)).toEqual([200, 200]);
  expect((await report([old])).body[0].label).toBe('true_positive');
  await seenByAll(s.publicUrls, old, 401, Date.now(), 1000);
  expect(await pingAll(current)).toEqual([200, 200]);
  expect(await show('acme-2')).toMatchObject({ status: 'active', value_ended_at: expect.any(String) });
});

test('an export carries the mark: re-imported unchanged, and served from a keys file the ended value stays refused', async () => {
  const old = await s.operator.key('exported', 'acme');
  const { key: current } = await s.operator.admin.roll('exported', 3600);
  expect((await report([old])).body[0].label).toBe('true_positive');
  const file = path.join(makeTempDir(), 'export.yaml');
  expect((await runKeysCli(s.stack.redisServer.url, ['export', file])).code).toBe(0);
  expect(fs.readFileSync(file, 'utf8')).toMatch(/value_ended_at/);
  const entries = (await auditOf('exported')).length;
  const view = await show('exported');
  const imported = await runKeysCli(s.stack.redisServer.url, ['import', file]);
  expect(imported.code).toBe(0);
  expect((await auditOf('exported')).length).toBe(entries);
  expect(await show('exported')).toEqual(view);
  const fromFile = await startGateway({ backendUrl: s.stack.backendUrl, keysFile: file, gatewayConfig: s.stack.gatewayConfig });
  try {
    expect((await getWithKey(fromFile.url, '/v1/ping', current)).status).toBe(200);
    expect((await getWithKey(fromFile.url, '/v1/ping', old)).status).toBe(401);
  } finally {
    await fromFile.stop();
  }
});

test('an unknown value, a value with the prefix and a wrong checksum, a demo key: false_positive, nothing changed', async () => {
  const value = await s.operator.key('acme-3', 'acme');
  const auditBefore = await s.stack.redis.xlen(redisKeys.audit);
  const recordBefore = await s.stack.redis.get(redisKeys.record('acme-3'));
  const events = s.receiver.events.length;
  const answer = await report(['plk_unknownValueOfNoKeyAtAll0000000000000000000000000', withBadChecksum(value), 'demo-standard-7Qx2mR9vK4', 'some-other-format-value']);
  expect(answer.status).toBe(200);
  expect(answer.body.map((f: { label: string }) => f.label)).toEqual(['false_positive', 'false_positive', 'false_positive', 'false_positive']);
  expect(await s.stack.redis.xlen(redisKeys.audit)).toBe(auditBefore);
  expect(await s.stack.redis.get(redisKeys.record('acme-3'))).toBe(recordBefore);
  expect(await pingAll(value)).toEqual([200, 200]);
  expect(s.receiver.events.length).toBe(events);
});

test('the same report twice, to both instances: still true_positive, one audit entry, one webhook', async () => {
  const value = await s.operator.key('acme-4', 'acme');
  const answers = await Promise.all([report([value], s.hookUrls[0]!), report([value], s.hookUrls[1]!)]);
  const again = await report([value]);
  for (const a of [...answers, again]) expect(a.body).toEqual([expect.objectContaining({ label: 'true_positive' })]);
  expect((await auditOf('acme-4')).filter((e) => e.action === 'leak')).toHaveLength(1);
  await eventually('the key.leaked webhook', () => s.receiver.of('key.leaked', 'acme-4').length === 1);
  // Deliveries are polled every 100 ms: a second event would have arrived by now.
  await new Promise((r) => setTimeout(r, 1500));
  expect(s.receiver.of('key.leaked', 'acme-4')).toHaveLength(1);
});

test('no reported value appears in any log line or page', async () => {
  expect(reported.length).toBeGreaterThan(5);
  // Every report's access line has arrived (lines come through a pipe, a little after the answer).
  await eventually('every report\'s access line', () => s.stack.gatewayOutput().filter((l) => l.includes('"listener":"hooks"')).length >= posted);
  const output = s.stack.gatewayOutput().join('\n');
  expect(output).toContain('secret scanning report answered');
  for (const value of reported) {
    expect(output).not.toContain(value);
    for (const page of pages) expect(page).not.toContain(value);
  }
});
