/**
 * on_cancel: revoke through the billing integration's key changes, on a real redis-server: every
 * live key of the account is revoked under the event's actor, and its `key.revoked` webhook carries
 * `"source": "billing"` like the other changes payments make; a key of another account is untouched.
 */
import pino from 'pino';
import { createRedisAccountStore } from '../../gateway/accounts/redis-account-store';
import { runAs } from '../../gateway/audit/actor';
import { billingApply } from '../../gateway/billing/billing-apply';
import { loadGatewayConfig } from '../../gateway/config/gateway-config';
import { createKeyAdmin } from '../../gateway/keys/key-admin';
import { ROOT } from '../kit/processes';
import { redisForSuite } from '../kit/redis-server';

const suite = redisForSuite();

test('a cancelled subscription revokes the account\'s keys: audited as the event, key.revoked with source billing', async () => {
  const events: Array<{ type: string; data: Record<string, unknown> }> = [];
  const admin = createKeyAdmin(suite.redis, loadGatewayConfig(`${ROOT}/config/gateway.yaml`), undefined, undefined, async (type, data) => void events.push({ type, data }));
  const accounts = createRedisAccountStore(suite.redis);
  await runAs({ name: 'test', channel: 'library' }, async () => {
    await accounts.create({ id: 'acme', name: 'Acme', emails: ['ops@acme.example'], billingCustomer: 'cus_acme' });
    await accounts.create({ id: 'other', name: 'Other', emails: ['ops@other.example'] });
    for (const [id, account] of [['acme-1', 'acme'], ['acme-2', 'acme'], ['other-1', 'other']]) {
      await admin.create({ id, tier: 'standard', countries: ['GB'], address: '127.0.0.1', account });
    }
  });
  const origin = { actor: { name: 'billing:stripe:evt_cancel', channel: 'billing' as const }, eventFields: { source: 'billing' } };
  const changed = await billingApply(admin, accounts, pino({ level: 'silent' })).revoke('acme', origin);

  expect(changed).toBe(2);
  expect((await admin.show('acme-1')).status).toBe('revoked');
  expect((await admin.show('other-1')).status).toBe('active');
  const revoked = events.filter((e) => e.type === 'key.revoked');
  expect(revoked.map((e) => e.data)).toEqual([
    { source: 'billing', key_id: 'acme-1', status: 'revoked' },
    { source: 'billing', key_id: 'acme-2', status: 'revoked' },
  ]);
  const audit = (await admin.readAudit({ keyId: 'acme-1', limit: 10 })).entries.filter((e) => e.action === 'revoke');
  expect(audit.map((e) => [e.actor, e.channel])).toEqual([['billing:stripe:evt_cancel', 'billing']]);
});
