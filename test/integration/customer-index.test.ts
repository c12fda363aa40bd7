/**
 * Billing customer → accounts (what a payment provider's event is matched to), on a real
 * redis-server: the index follows creates, changes and deletes; accounts written before the index
 * existed are found (added once, then the flag is set); a look-up reads the customer's set and its
 * records, not every account; the memory store answers alike.
 */
import { runAs } from '../../gateway/audit/actor';
import { createMemoryAccountStore } from '../../gateway/accounts/memory-account-store';
import { createRedisAccountStore } from '../../gateway/accounts/redis-account-store';
import { toStoredAccount } from '../../gateway/accounts/redis-account-layout';
import { redisKeys } from '../../gateway/keys/redis-layout';
import { redisForSuite } from '../kit/redis-server';

const suite = redisForSuite();
const admin = { name: 'test', channel: 'admin_api' } as const;
beforeEach(() => suite.redis.flushall());

const account = (id: string, billingCustomer?: string) => ({ id, name: id, emails: [`${id}@customers.example`], ...(billingCustomer ? { billingCustomer } : {}) });

/** Calls of one Redis command since the last CONFIG RESETSTAT. */
async function calls(command: string): Promise<number> {
  const stats = await suite.redis.info('commandstats');
  return Number(new RegExp(`cmdstat_${command}:calls=(\\d+)`).exec(stats)?.[1] ?? 0);
}

test('the index follows creates, a changed customer, a removed customer and a delete', async () => {
  const store = createRedisAccountStore(suite.redis);
  await runAs(admin, async () => {
    await store.create(account('acme', 'cus_1'));
    await store.create(account('beta', 'cus_1'));
    await store.create(account('gamma', 'cus_2'));
    await store.create(account('delta'));
  });
  expect(await store.idsOfBillingCustomer('cus_1')).toEqual(['acme', 'beta']);
  expect(await store.idsOfBillingCustomer('cus_2')).toEqual(['gamma']);
  expect(await store.idsOfBillingCustomer('cus_none')).toEqual([]);

  await runAs(admin, () => store.update('beta', { billingCustomer: 'cus_3' }));
  expect(await store.idsOfBillingCustomer('cus_1')).toEqual(['acme']);
  expect(await store.idsOfBillingCustomer('cus_3')).toEqual(['beta']);
  expect(await suite.redis.smembers(redisKeys.customerAccounts('cus_1'))).toEqual(['acme']); // left, not only filtered

  await runAs(admin, () => store.update('gamma', { billingCustomer: null }));
  expect(await store.idsOfBillingCustomer('cus_2')).toEqual([]);
  expect(await suite.redis.exists(redisKeys.customerAccounts('cus_2'))).toBe(0);

  await runAs(admin, () => store.delete('acme'));
  expect(await store.idsOfBillingCustomer('cus_1')).toEqual([]);
});

test('accounts written before the index existed are found: added once, then the flag is set', async () => {
  // As an earlier version left them: the record and the ids set, no customer sets, no flag.
  const now = new Date().toISOString();
  for (const [id, customer] of [['old-a', 'cus_old'], ['old-b', 'cus_old'], ['old-c', undefined]] as const) {
    await suite.redis.set(redisKeys.account(id), JSON.stringify(toStoredAccount({ ...account(id, customer), createdAt: now, updatedAt: now })));
    await suite.redis.zadd(redisKeys.accounts, 0, id);
  }
  const store = createRedisAccountStore(suite.redis);
  expect(await store.idsOfBillingCustomer('cus_old')).toEqual(['old-a', 'old-b']);
  expect(await suite.redis.exists(redisKeys.customerAccountsBuilt)).toBe(1);
  expect((await suite.redis.smembers(redisKeys.customerAccounts('cus_old'))).sort()).toEqual(['old-a', 'old-b']);
  // Another instance (a store of its own) sees the flag and does not read every account again.
  await suite.redis.config('RESETSTAT');
  expect(await createRedisAccountStore(suite.redis).idsOfBillingCustomer('cus_old')).toEqual(['old-a', 'old-b']);
  expect(await calls('zrangebylex')).toBe(0);
});

test('a look-up reads the customer\'s accounts, not every account (2,000 accounts)', async () => {
  const store = createRedisAccountStore(suite.redis);
  await runAs(admin, async () => {
    for (let i = 0; i < 2000; i++) await store.create(account(`acct-${String(i).padStart(4, '0')}`, i === 1234 ? 'cus_wanted' : `cus_${i}`));
  });
  await store.idsOfBillingCustomer('cus_warm'); // the first look-up of this store checks the flag
  await suite.redis.config('RESETSTAT');
  expect(await store.idsOfBillingCustomer('cus_wanted')).toEqual(['acct-1234']);
  expect(await calls('zrangebylex')).toBe(0);
  expect(await calls('get')).toBe(1);
});

test('a stale id in a customer\'s set (a writer that died after joining) is filtered out by the record', async () => {
  const store = createRedisAccountStore(suite.redis);
  await runAs(admin, () => store.create(account('acme', 'cus_1')));
  await suite.redis.sadd(redisKeys.customerAccounts('cus_1'), 'ghost');
  await suite.redis.sadd(redisKeys.customerAccounts('cus_2'), 'acme');
  expect(await store.idsOfBillingCustomer('cus_1')).toEqual(['acme']);
  expect(await store.idsOfBillingCustomer('cus_2')).toEqual([]);
});

test('the memory store answers the same question', async () => {
  const store = createMemoryAccountStore({});
  await runAs(admin, async () => {
    await store.create(account('b', 'cus_1'));
    await store.create(account('a', 'cus_1'));
    await store.create(account('c', 'cus_2'));
  });
  expect(await store.idsOfBillingCustomer('cus_1')).toEqual(['a', 'b']);
  expect(await store.idsOfBillingCustomer('cus_9')).toEqual([]);
});

test('concurrent first look-ups of one process share one pass over the accounts; a failed pass is tried again', async () => {
  const store = createRedisAccountStore(suite.redis);
  await suite.redis.config('RESETSTAT');
  expect(await Promise.all(Array.from({ length: 5 }, () => store.idsOfBillingCustomer('cus_none')))).toEqual([[], [], [], [], []]);
  expect(await calls('zrangebylex')).toBe(1);

  // A pass that fails (Redis answers an error) is not remembered: the next look-up passes again.
  const failing = createRedisAccountStore(suite.redis);
  await suite.redis.del(redisKeys.customerAccountsBuilt);
  await suite.redis.set(redisKeys.accounts, 'not a sorted set');
  await expect(failing.idsOfBillingCustomer('cus_none')).rejects.toThrow(/WRONGTYPE/);
  await suite.redis.del(redisKeys.accounts);
  expect(await failing.idsOfBillingCustomer('cus_none')).toEqual([]);
  expect(await suite.redis.exists(redisKeys.customerAccountsBuilt)).toBe(1);
});
