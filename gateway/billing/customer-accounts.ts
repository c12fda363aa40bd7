import type { AccountStore } from '../accounts/account-store';

const PAGE = 1000;

/**
 * The accounts whose `billing_customer` is `customer` (normally one), read page by page: billing
 * events are rare beside the accounts they are matched against, so no index is kept.
 */
export async function accountsOfCustomer(accounts: AccountStore, customer: string): Promise<string[]> {
  const found: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await accounts.list({ limit: PAGE, ...(cursor !== undefined ? { cursor } : {}) });
    for (const a of page.accounts) if (a.billingCustomer === customer) found.push(a.id);
    cursor = page.nextCursor ?? undefined;
  } while (cursor !== undefined);
  return found;
}
