/**
 * The providers' listener (gateway/hooks/): on when HOOKS_PORT is set, in the process that serves
 * the admin listener (one worker of several). Each provider that is on adds its path to the route
 * table here; every other path is 404.
 */
import { servesAdministration } from '../workers/worker-side';
import type { Logger } from 'pino';
import { stripeHook } from '../billing/stripe-hook';
import { DEFAULT_STRIPE_BILLING, type StripeBillingConfig } from '../config/billing-config';
import type { Env } from '../config/env';
import type { HooksEnv } from '../config/hooks-env';
import { createHooksListener, HookRoutes } from '../hooks/hooks-app';
import type { Holders } from './holders';
import type { KeyAdministration } from './key-administration';
import type { KeyStores } from './key-store';
import { githubLeaksRoute } from './leaks-route';
import type { LeaksEnv } from '../config/leaks-env';
import type { OptionalListener } from './listeners';

export interface HookDeps {
  readonly logger: Logger;
  readonly keys: KeyStores;
  readonly leaks: LeaksEnv;
  readonly administration?: KeyAdministration;
  readonly holders?: Holders;
  /** `billing.stripe` of the gateway YAML as the last (re)load said. */
  readonly stripeBilling: () => StripeBillingConfig;
}

/** The providers' paths, from the providers that are on. */
export function hookRoutes(hooks: HooksEnv, deps: HookDeps): HookRoutes {
  const routes = new HookRoutes();
  if (hooks.stripe && deps.administration && deps.holders) {
    routes.add(stripeHook({
      env: hooks.stripe,
      config: deps.stripeBilling,
      keyAdmin: deps.administration.keyAdmin,
      accounts: deps.holders.stores.accounts,
      redis: deps.administration.redis,
      logger: deps.logger,
    }));
  }
  if (leaksOn(hooks)) routes.add(githubLeaksRoute(deps.leaks, deps.keys, deps.administration, deps.logger));
  return routes;
}

/** GitHub's leaked-key reports: on with the listener unless LEAKS_GITHUB=off. */
export const leaksOn = (hooks: HooksEnv): boolean => hooks.port !== undefined && hooks.leaksGithub;

export function hooksListener(env: Env, hooks: HooksEnv, routes: () => HookRoutes, logger: Logger): OptionalListener {
  const on = hooks.port !== undefined && servesAdministration(env);
  return {
    message: 'hooks listening',
    port: on ? hooks.port : undefined,
    host: hooks.host,
    app: () => {
      const table = routes();
      logger.info({ paths: table.paths }, 'hooks paths');
      return createHooksListener(table, logger);
    },
  };
}

/** The gateway YAML's `billing.stripe`, updated by each reload. */
export function stripeBillingConfig(initial: StripeBillingConfig | undefined): { current(): StripeBillingConfig; update(next: StripeBillingConfig | undefined): void } {
  let config = initial ?? DEFAULT_STRIPE_BILLING;
  return { current: () => config, update: (next) => { config = next ?? DEFAULT_STRIPE_BILLING; } };
}
