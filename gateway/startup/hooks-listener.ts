/**
 * The providers' listener (gateway/hooks/): on when HOOKS_PORT is set, in the process that serves
 * the admin listener (one worker of several). Each provider that is on adds its path to the route
 * table here; every other path is 404.
 */
import type { Logger } from 'pino';
import type { Env } from '../config/env';
import type { HooksEnv } from '../config/hooks-env';
import { createHooksListener, HookRoutes } from '../hooks/hooks-app';
import type { OptionalListener } from './listeners';

/** The providers' paths, from the providers that are on. */
export function hookRoutes(_hooks: HooksEnv): HookRoutes {
  const routes = new HookRoutes();
  return routes;
}

export function hooksListener(env: Env, hooks: HooksEnv, routes: () => HookRoutes, logger: Logger): OptionalListener {
  const on = hooks.port !== undefined && env.GATEWAY_ADMIN_WORKER !== '0';
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
