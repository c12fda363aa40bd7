import type { RedisClient } from '../redis/connect';
import { redisKeys } from '../keys/redis-layout';
import type { Account } from './account';

const BACKFILL_PAGE = 1000;

/**
 * The Redis index from a billing customer to its accounts (`lgw:customer-accounts:<customer>`, a
 * set), so that a payment provider's event finds its accounts in one read, however many accounts
 * there are. Like the key pointers, the record decides: an id joins the set before the record names
 * the customer and leaves it after the record stopped naming it, and every reader checks the record,
 * so a writer dying half-way leaves at worst an id that is filtered out.
 *
 * Accounts written before the index existed are added once, by the first look-up that finds the
 * `built` flag missing (every id in the accounts set is read, page by page); writes made meanwhile
 * add themselves, so the flag is set only after a complete pass.
 */
export function createCustomerIndex(redis: RedisClient, get: (id: string) => Promise<Account | undefined>) {
  /** The one pass of this process (concurrent first look-ups share it); forgotten if it fails, so the next look-up tries again. */
  let pass: Promise<void> | undefined;
  async function backfill(): Promise<void> {
    if ((await redis.exists(redisKeys.customerAccountsBuilt)) === 1) return;
    let after = '-';
    for (;;) {
      const ids = await redis.zrangebylex(redisKeys.accounts, after, '+', 'LIMIT', 0, BACKFILL_PAGE);
      // Single-key commands only (any topology, a Cluster too), a page at a time.
      const accounts = await Promise.all(ids.map(get));
      await Promise.all(accounts.map((a) => (a?.billingCustomer !== undefined ? redis.sadd(redisKeys.customerAccounts(a.billingCustomer), a.id) : undefined)));
      if (ids.length < BACKFILL_PAGE) break;
      after = `(${ids[ids.length - 1]!}`;
    }
    await redis.set(redisKeys.customerAccountsBuilt, new Date().toISOString());
  }
  const built = (): Promise<void> => {
    pass ??= backfill().catch((err: unknown) => {
      pass = undefined;
      throw err;
    });
    return pass;
  };
  return {
    /** Before the record is written: the account joins its customer's set. */
    async join(after: Account): Promise<void> {
      if (after.billingCustomer !== undefined) await redis.sadd(redisKeys.customerAccounts(after.billingCustomer), after.id);
    },
    /** After the record is written (or deleted): the account leaves the set of a customer it no longer names. */
    async leave(before: Account | undefined, after: Account | undefined): Promise<void> {
      const was = before?.billingCustomer;
      if (was !== undefined && was !== after?.billingCustomer) await redis.srem(redisKeys.customerAccounts(was), before!.id);
    },
    async idsOf(customer: string): Promise<string[]> {
      await built();
      const ids = (await redis.smembers(redisKeys.customerAccounts(customer))).sort();
      const accounts = await Promise.all(ids.map(get));
      return ids.filter((_id, i) => accounts[i]?.billingCustomer === customer);
    },
  };
}
