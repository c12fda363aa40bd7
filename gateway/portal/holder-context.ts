import type { Response } from 'express';
import type { Account } from '../accounts/account';
import type { AccountStore } from '../accounts/account-store';
import type { SelfServicePolicy } from '../config/portal-policy';
import type { ConsoleStore } from '../console/console-store';
import type { RequestStore } from '../requests/request-store';
import type { ChangeBudget } from './change-budget';
import type { PortalContext } from './pages/layout';
import type { PortalSession, PortalSessionStore } from './portal-sessions';

export interface HolderDeps {
  /** The key store as the console reads it; its `admin` makes changes (absent: the portal is read-only). */
  keys: ConsoleStore;
  accounts: AccountStore;
  /** Subscription requests (absent with the read-only keys-file store). */
  requests?: RequestStore;
  sessions: PortalSessionStore;
  secureCookies: boolean;
  /** The current `portal.self_service` (hot-reloaded with the gateway YAML). */
  policy: () => SelfServicePolicy;
  /** Changes per account and minute (`policy().changesPerMinute`). */
  changeBudget: ChangeBudget;
}

/** The signed-in holder of this request. */
export interface Holder {
  session: PortalSession;
  account: Account;
  ctx: PortalContext;
}

export const holderOf = (res: Response): Holder => res.locals.holder as Holder;
