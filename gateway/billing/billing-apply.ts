import type { Logger } from 'pino';
import type { AccountStore } from '../accounts/account-store';
import { ApiError } from '../errors';
import type { ChangeOrigin, KeyAdmin } from '../keys/key-admin-types';
import type { KeyView } from '../keys/key-view';
import type { PauseReason } from '../keys/pause-reasons';

/** The countries and tier a subscription gives (either may be absent: unchanged). */
export interface Entitlements {
  readonly countries?: readonly string[];
  readonly tier?: string;
}

/** Applies an account's billing state to its keys through the key admin (audited, announced, events sent). */
export interface BillingApply {
  /** Holds `reason` on every key of the account (`hold`, noting the open invoice's link), or settles that one reason. */
  reason(accountId: string, reason: PauseReason, hold: boolean, origin: ChangeOrigin, invoiceUrl?: string): Promise<number>;
  entitlements(accountId: string, wanted: Entitlements, origin: ChangeOrigin): Promise<number>;
  /** `on_cancel: revoke`: every key of the account ends. */
  revoke(accountId: string, origin: ChangeOrigin): Promise<number>;
}

const sameList = (a: readonly string[], b: readonly string[]): boolean => a.length === b.length && [...a].sort().every((v, i) => v === [...b].sort()[i]);

/** An account deleted meanwhile has no keys to change. */
const unlessGone = async (work: () => Promise<number>): Promise<number> => {
  try {
    return await work();
  } catch (err) {
    if (err instanceof ApiError && err.code === 'not_found') return 0;
    throw err;
  }
};

export function billingApply(keyAdmin: KeyAdmin, accounts: AccountStore, logger: Logger): BillingApply {
  /** The account's keys that are not revoked (a revoked key is never changed by a payment). */
  async function liveKeys(accountId: string): Promise<KeyView[]> {
    const views = await Promise.all((await accounts.keyIdsOf(accountId)).map((id) => keyAdmin.show(id).catch((err: unknown) => {
      if (err instanceof ApiError && err.code === 'not_found') return undefined;
      throw err;
    })));
    return views.filter((v): v is KeyView => v !== undefined && v.status !== 'revoked' && v.account === accountId);
  }

  return {
    async reason(accountId, reason, hold, origin, invoiceUrl) {
      return unlessGone(async () => {
        const done = hold
          ? await keyAdmin.pauseAccount(accountId, reason, origin, invoiceUrl !== undefined ? { billing_invoice_url: invoiceUrl } : undefined)
          : await keyAdmin.settleAccount(accountId, reason, origin);
        return done.keys.filter((k) => k.changed).length;
      });
    },
    async entitlements(accountId, wanted, origin) {
      let changed = 0;
      for (const view of await liveKeys(accountId)) {
        const patch: Record<string, unknown> = {};
        if (wanted.countries && !sameList(view.countries, wanted.countries)) patch.countries = [...wanted.countries];
        if (wanted.tier && view.tier !== wanted.tier) patch.tier = wanted.tier;
        if (!Object.keys(patch).length) continue;
        await keyAdmin.set(view.id, patch, { issue: true }, undefined, origin);
        changed++;
      }
      return changed;
    },
    async revoke(accountId, origin) {
      let changed = 0;
      for (const view of await liveKeys(accountId)) {
        await keyAdmin.revoke(view.id, undefined, origin);
        logger.info({ account: accountId, key_id: view.id, actor: origin.actor!.name }, 'billing revoked a key (billing.stripe.on_cancel: revoke)');
        changed++;
      }
      return changed;
    },
  };
}
