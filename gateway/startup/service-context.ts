import type { Logger } from 'pino';
import { defined } from '../defined';
import type { Counters } from '../limits/counters';
import type { UsageStore } from '../usage/usage-model';
import type { Holders } from './holders';
import type { KeyAdministration } from './key-administration';
import type { KeyStores } from './key-store';
import type { SharedRedis } from './redis-and-counters';

/**
 * The services the operator and holder listeners (admin API and console, portal) are built on,
 * made once in start-up (main.ts) and handed to each: the key stores, usage, counters, and, with
 * the Redis key store, its administration, the holders' stores and the shared Redis.
 */
export interface ServiceContext {
  readonly logger: Logger;
  readonly keys: KeyStores;
  readonly usageStore: UsageStore;
  readonly counters: Counters;
  readonly administration?: KeyAdministration;
  readonly holders?: Holders;
  readonly redis?: SharedRedis;
}

type Parts = Omit<ServiceContext, 'administration' | 'holders' | 'redis'> & {
  readonly administration: KeyAdministration | undefined;
  readonly holders: Holders | undefined;
  readonly redis: SharedRedis | undefined;
};

/** The context from start-up's parts, those not running (undefined) left out. */
export function serviceContext({ administration, holders, redis, ...always }: Parts): ServiceContext {
  return { ...always, ...defined({ administration, holders, redis }) };
}
