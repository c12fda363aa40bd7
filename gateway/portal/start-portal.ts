import type { Server } from 'node:http';
import type { Logger } from 'pino';
import type { LinkTokens } from '../accounts/link-tokens';
import type { PortalEnv } from '../config/portal-env';
import { DEFAULT_SELF_SERVICE, type SelfServicePolicy } from '../config/portal-policy';
import type { ConsoleStore } from '../console/console-store';
import type { RedisClient } from '../redis/connect';
import type { HolderStores } from '../requests/holder-stores';
import { createServer } from '../server';
import { discoverOidc } from './oidc';
import { createMemoryPendingLogins, createRedisPendingLogins } from './pending-logins';
import { createPortalApp } from './portal-app';
import { createMemoryPortalSessions, createRedisPortalSessions } from './portal-sessions';
import { createMemorySignInBudget, createRedisSignInBudget } from './sign-in-budget';
import { createLoginStartBudget } from './login-start-budget';
import { createMemoryChangeBudget, createRedisChangeBudget } from './change-budget';

export interface PortalStart {
  env: PortalEnv;
  logger: Logger;
  trustedProxies: readonly string[];
  /** The current policy (the gateway YAML's `portal.self_service`, hot-reloaded). */
  policy: () => SelfServicePolicy | undefined;
  /** The key store as the console reads it (with `admin` for the Redis store: changes go through it). */
  keys: ConsoleStore;
  /** Accounts, one-time links and requests (Redis: createRedisHolderStores; keys file: createFileHolderStores). */
  holders: HolderStores & { linkTokens: LinkTokens };
  /** The Redis of the key store (KEY_STORE=redis): sessions, pending sign-ins and the budget live there too. */
  redis?: RedisClient;
}

/**
 * Starts the key holders' portal on PORTAL_HOST:PORTAL_PORT (called by start-up only when
 * PORTAL_PORT is set; otherwise nothing listens). With KEY_STORE=redis, accounts, one-time links,
 * sessions, pending OpenID sign-ins and the failed sign-in budget are in Redis, shared by every
 * instance; with the keys file they are in this process and the portal is read-only. The OpenID
 * provider is discovered before listening: a provider that cannot be reached stops start-up.
 */
/** A portal that cannot start stops start-up with one line naming the variable. */
function stop(line: string): never {
  process.stderr.write(`config error: environment variable ${line}\n`);
  process.exit(1);
}

export async function startPortal(o: PortalStart): Promise<{ server: Server; links: LinkTokens }> {
  const { accounts, linkTokens: links, requests } = o.holders;
  const oidc = o.env.oidc ? await discoverOidc(o.env.oidc, o.env.publicUrl).catch((err: Error) => stop(`PORTAL_OIDC_ISSUER: the provider's discovery document could not be read (${err.message})`)) : undefined;
  const app = createPortalApp({
    publicUrl: o.env.publicUrl,
    secureCookies: o.env.secureCookies,
    accounts,
    links,
    sessions: o.redis ? createRedisPortalSessions(o.redis) : createMemoryPortalSessions(),
    pending: o.redis ? createRedisPendingLogins(o.redis) : createMemoryPendingLogins(),
    budget: o.redis ? createRedisSignInBudget(o.redis) : createMemorySignInBudget(),
    loginStarts: createLoginStartBudget(o.redis),
    changeBudget: o.redis ? createRedisChangeBudget(o.redis) : createMemoryChangeBudget(),
    ...(oidc ? { oidc } : {}),
    keys: o.keys,
    ...(requests ? { requests } : {}),
    policy: () => o.policy() ?? DEFAULT_SELF_SERVICE,
    logger: o.logger,
    trustedProxies: o.trustedProxies,
  });
  const server = createServer(app);
  await new Promise<void>((resolve) => {
    server.once('error', (err: NodeJS.ErrnoException) => stop(`PORTAL_PORT: cannot listen on ${o.env.host}:${o.env.port} (${err.code ?? err.message})`));
    server.listen(o.env.port, o.env.host, resolve);
  });
  const address = server.address();
  o.logger.info({ port: typeof address === 'object' && address ? address.port : o.env.port, host: o.env.host, public_url: o.env.publicUrl, oidc: !!oidc, read_only: !o.keys.admin }, 'portal listening');
  if (o.env.demoLinkAccount && !o.redis) {
    // The demo only (PORTAL_DEMO_LINK_ACCOUNT, keys-file store): a one-time link valid an hour,
    // written to the terminal for the person who ran `npm start`, never into the log.
    const token = await links.issue(o.env.demoLinkAccount, 60);
    process.stdout.write(`Key holders' portal: sign in as account "${o.env.demoLinkAccount}" (read-only demo) once, within an hour, at ${o.env.publicUrl}/portal/link/${token}\n`);
  } else if (o.env.demoLinkAccount) {
    o.logger.warn('PORTAL_DEMO_LINK_ACCOUNT is ignored with KEY_STORE=redis: issue links with `keys account link ID`');
  }
  return { server, links };
}
