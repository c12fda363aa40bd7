/**
 * Key holders' stores (accounts, subscription requests, one-time sign-in links) for the admin API,
 * the operator console and the portal: over the Redis key store through key administration, or the
 * keys file's `accounts:` list (read-only). Absent when neither the admin listener nor the portal is on.
 */
import type { Logger } from 'pino';
import type { LinkTokens } from '../accounts/link-tokens';
import type { SelfServicePolicy } from '../config/portal-policy';
import { createFileHolderStores, createRedisHolderStores, type HolderStores } from '../requests/holder-stores';
import { createKeyEventSink } from '../webhooks/key-events';
import type { KeyAdministration } from './key-administration';
import type { KeyStores } from './key-store';

export interface Holders {
  readonly stores: HolderStores & { linkTokens: LinkTokens };
  /** With the keys file: the account a key names (the console shows it). */
  readonly accountOfKey?: (keyId: string) => Promise<string | undefined>;
}

export function startHolders(keys: KeyStores, administration: KeyAdministration | undefined, logger: Logger): Holders | undefined {
  if (administration) {
    const { redis, keyAdmin, auditRetention } = administration;
    return { stores: createRedisHolderStores(redis, keyAdmin, { logger, events: createKeyEventSink(redis, logger), retention: auditRetention }) };
  }
  if (!keys.file) return undefined;
  const stores = createFileHolderStores(keys.file.file, logger);
  return { stores, accountOfKey: stores.accounts.accountOfKey };
}

/** The portal's self-service policy as the last (re)load of the gateway YAML said. */
export function selfServicePolicy(initial: SelfServicePolicy | undefined): { current(): SelfServicePolicy | undefined; update(next: SelfServicePolicy | undefined): void } {
  let policy = initial;
  return { current: () => policy, update: (next) => { policy = next; } };
}
