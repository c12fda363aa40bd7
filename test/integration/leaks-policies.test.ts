/**
 * `leaks.on_leak` other than the default, on a real gateway over redis-server, the key list read
 * from a file: `pause` pauses with the reason `leaked` (403 key_paused) until a roll, which a settle
 * never replaces (409 naming the roll) and which gives the leaked value no grace; `notify` changes
 * nothing but the mark, the audit entry and the webhook. The policy follows the gateway YAML as it
 * is reloaded.
 */
import { adminCall } from '../kit/admin-api';
import { getWithKey, removeTempDirs, seenByAll } from '../kit/gateway-stack';
import { match, postReport } from '../kit/github-reports';
import { ADMIN_TOKEN, startLeaksStack, type LeaksStack } from '../kit/leaks-stack';
import { eventually } from '../kit/timing';

jest.setTimeout(90_000);

let s: LeaksStack;
beforeAll(async () => {
  s = await startLeaksStack({ keyList: 'file', onLeak: 'pause' });
}, 90_000);
afterAll(async () => {
  await s?.stop();
  removeTempDirs();
});

const report = (value: string) => postReport(s.hookUrls[0]!, [match(value)], s.github);
const admin = (method: string, url: string, body?: unknown) => adminCall(s.adminUrl, ADMIN_TOKEN, method, url, body);
const ping = (value: string) => getWithKey(s.publicUrls[0]!, '/v1/ping', value);

test('pause: 403 key_paused with the reason leaked; a settle does not clear it; a roll does, with no grace', async () => {
  const value = await s.operator.key('paused-1', undefined);
  await s.operator.admin.pause('paused-1', 'unpaid_renewal');
  expect((await report(value)).body).toEqual([expect.objectContaining({ label: 'true_positive' })]);
  expect((await admin('GET', '/admin/keys/paused-1')).body).toMatchObject({ status: 'paused', pause_reasons: ['leaked', 'unpaid_renewal'], leaked_at: expect.any(String) });
  expect((await admin('GET', '/admin/keys/paused-1')).body).not.toHaveProperty('value_ended_at');
  const refused = await ping(value);
  expect(refused.status).toBe(403);
  expect(refused.body.error).toBe('key_paused');

  const settled = await admin('POST', '/admin/keys/paused-1/settle', {});
  expect(settled.status).toBe(409);
  expect(settled.body.message).toMatch(/roll/);
  expect((await admin('POST', '/admin/keys/paused-1/settle', { reason: 'unpaid_renewal' })).status).toBe(200);
  expect((await admin('GET', '/admin/keys/paused-1')).body).toMatchObject({ status: 'paused', pause_reasons: ['leaked'] });
  expect((await ping(value)).status).toBe(403);

  const rolled = await admin('POST', '/admin/keys/paused-1/roll', { grace_seconds: 3600 });
  expect(rolled.status).toBe(201);
  const view = (await admin('GET', '/admin/keys/paused-1')).body;
  expect(view.status).toBe('active');
  for (const field of ['pause_reasons', 'leaked_at', 'leak_url', 'previous_key_valid_until']) expect(view).not.toHaveProperty(field);
  await seenByAll(s.publicUrls, rolled.body.key, 200, Date.now());
  expect((await ping(value)).status).toBe(401);
  const event = await eventually('key.leaked', () => s.receiver.of('key.leaked', 'paused-1')[0]);
  expect(event.data).toMatchObject({ action: 'pause' });
});

test('notify (the YAML reloaded): only the mark, the audit entry and the webhook', async () => {
  s.writeConfig('notify');
  await eventually('the reload', () => s.gateways[0]!.output.some((l) => l.includes('configuration reloaded')));
  const value = await s.operator.key('notified-1', undefined);
  const before = (await admin('GET', '/admin/keys/notified-1')).body;
  expect((await report(value)).body).toEqual([expect.objectContaining({ label: 'true_positive' })]);
  const after = (await admin('GET', '/admin/keys/notified-1')).body;
  expect(after).toMatchObject({ status: 'active', leaked_at: expect.any(String), leak_url: expect.any(String) });
  expect(after).not.toHaveProperty('value_ended_at');
  const { leaked_at: _a, leak_url: _u, updated_at: _t, ...rest } = after;
  const { updated_at: _b, ...restBefore } = before;
  expect(rest).toEqual(restBefore);
  expect((await ping(value)).status).toBe(200);
  const entries = (await admin('GET', '/admin/audit?key_id=notified-1')).body.entries;
  expect(entries[0]).toMatchObject({ action: 'leak', actor: 'leaks:github', channel: 'leaks' });
  const event = await eventually('key.leaked', () => s.receiver.of('key.leaked', 'notified-1')[0]);
  expect(event.data).toEqual({ key_id: 'notified-1', account_id: null, url: 'https://github.com/acme/app/blob/main/.env', action: 'notify' });
});
