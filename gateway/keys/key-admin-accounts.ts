import { readOutboxValue } from '../audit/outbox-value';
import { ApiError } from '../errors';
import type { AccountKeyChange, AccountStateChange, ChangeOrigin, KeyAdmin, KeyAdminContext, ReasonChange } from './key-admin-types';
import { leakedConflict, type keyAdminStates } from './key-admin-states';
import { parseInput, parsePause, SettleSchema } from './key-input';
import { LEAKED } from './pause-reasons';
import { parseStoredKey, redisKeys, type StoredKey } from './redis-layout';

type States = ReturnType<typeof keyAdminStates>;

/** The records of the keys of `accountId`, in id order; 404 when there is no such account. */
async function accountKeys(ctx: KeyAdminContext, accountId: string): Promise<StoredKey[]> {
  // Parsed, not EXISTS: a deleted account's value stays (a tombstone) until its audit entry is in the log.
  if (!readOutboxValue(await ctx.redis.get(redisKeys.account(accountId))).body) {
    throw new ApiError('not_found', {}, undefined, `No account with id "${accountId}".`);
  }
  // The index is a superset (a key moved to another account may still be listed): each record says.
  const ids = (await ctx.redis.smembers(redisKeys.accountKeys(accountId))).sort();
  const records = await Promise.all(ids.map(async (id) => parseStoredKey(await ctx.redis.get(redisKeys.record(id)))));
  return records.filter((s): s is StoredKey => s !== undefined && s.account === accountId);
}

function listed(done: ReasonChange, action: 'pause' | 'settle'): AccountKeyChange {
  const moved = action === 'pause' ? done.after.filter((r) => !done.before.includes(r)) : done.before.filter((r) => !done.after.includes(r));
  return {
    id: done.id,
    status: done.status,
    pause_reasons: [...done.after],
    changed: done.changed,
    ...(done.changed ? (action === 'pause' ? { added: moved } : { settled: moved }) : {}),
  };
}

/** A key revoked or deleted while the account was being changed is left alone; any other failure stops the call. */
async function leftAloneOr(ctx: KeyAdminContext, id: string, err: unknown): Promise<AccountKeyChange | undefined> {
  const now = parseStoredKey(await ctx.redis.get(redisKeys.record(id)));
  if (now?.status === 'revoked') return skippedRevoked(now);
  if (!now) return undefined;
  throw err;
}

const skippedRevoked = (s: StoredKey): AccountKeyChange => ({ id: s.id, status: 'revoked', pause_reasons: [], changed: false, skipped: 'revoked' });

/**
 * Pause and settle at the account level, for any billing system: the change applies to every key
 * of the account, one key at a time (each its own audited write, so a retried call after a failure
 * part-way changes only what is left). Revoked keys are listed and left alone.
 */
export function keyAdminAccounts(ctx: KeyAdminContext, states: States): Pick<KeyAdmin, 'pauseAccount' | 'settleAccount'> {
  async function each(accountId: string, action: 'pause' | 'settle', apply: (id: string) => Promise<ReasonChange>): Promise<AccountStateChange> {
    const keys: AccountKeyChange[] = [];
    for (const stored of await accountKeys(ctx, accountId)) {
      const entry = stored.status === 'revoked'
        ? skippedRevoked(stored)
        : await apply(stored.id).then((done) => listed(done, action), (err: unknown) => leftAloneOr(ctx, stored.id, err));
      if (entry) keys.push(entry);
    }
    return { account: accountId, keys };
  }

  return {
    async pauseAccount(accountId, reason, origin?: ChangeOrigin, details?) {
      const input = parsePause(reason, details);
      return each(accountId, 'pause', (id) => states.pauseFor(id, input.reason, origin, input.billing_invoice_url));
    },
    async settleAccount(accountId, reason, origin?: ChangeOrigin) {
      const ask = parseInput(SettleSchema, reason === undefined || reason === null ? {} : { reason });
      if (ask.reason === LEAKED) throw leakedConflict();
      return each(accountId, 'settle', (id) => states.settleFor(id, ask, origin, false));
    },
  };
}
