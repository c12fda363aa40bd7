/**
 * The key holders' portal (gateway/portal/): on when PORTAL_PORT is set, in the process that serves
 * the admin listener (one worker of several). Its pages read the key store as the console does and
 * change keys through key administration (Redis) or not at all (the keys file: read-only).
 */
import { servesAdministration } from '../workers/worker-side';
import type { Server } from 'node:http';
import type { Env } from '../config/env';
import type { PortalEnv } from '../config/portal-env';
import type { SelfServicePolicy } from '../config/portal-policy';
import { keyAdminConsoleStore } from '../console/console-store';
import { fileConsoleStore } from '../console/file-console-store';
import { startPortal } from '../portal/start-portal';
import { usageViewsOf } from './admin-listener';
import type { ServiceContext } from './service-context';

export interface PortalListenerDeps extends ServiceContext {
  readonly policy: () => SelfServicePolicy | undefined;
}

export async function startPortalListener(env: Env, portal: PortalEnv | undefined, deps: PortalListenerDeps): Promise<Server | undefined> {
  if (!portal || !servesAdministration(env) || !deps.holders) return undefined;
  const usage = usageViewsOf(deps.usageStore);
  const file = deps.keys.file;
  const keys = deps.administration
    ? keyAdminConsoleStore(deps.administration.keyAdmin, `the Redis key store at ${deps.redis!.topology.where}`, usage)
    : fileConsoleStore({ file: file!.file, keys: () => file!.current(), counters: deps.counters, audit: file!.audit, usage });
  const started = await startPortal({
    env: portal,
    logger: deps.logger,
    trustedProxies: env.TRUST_PROXY,
    policy: deps.policy,
    keys,
    holders: deps.holders.stores,
    ...(deps.administration ? { redis: deps.administration.redis } : {}),
  });
  return started.server;
}
