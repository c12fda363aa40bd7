/**
 * The admin listener: the admin API and the operator console (with a Redis key store), or the
 * console alone, read-only (with the keys file). With GATEWAY_WORKERS > 1 one worker serves it
 * (gateway/workers/supervisor.ts).
 */
import { servesAdministration } from '../workers/worker-side';
import type { Express } from 'express';
import { createAdminApp } from '../admin/admin-app';
import type { Env } from '../config/env';
import { createConsoleRouter } from '../console/console-app';
import { createConsoleOnlyApp } from '../console/console-only-app';
import { keyAdminConsoleStore, type ConsoleStore } from '../console/console-store';
import { fileConsoleStore } from '../console/file-console-store';
import { createMemorySessionStore } from '../console/sessions';
import { ApiError } from '../errors';
import type { OperatorRegistry } from '../operators/operator-tokens';
import { addDays, dayOf } from '../usage/usage-dates';
import type { UsageStore } from '../usage/usage-model';
import { dailyUsage, monthlyReport, reportCsv } from '../usage/usage-reports';
import { createUsageRoutes, USAGE_PATHS } from '../usage/usage-routes';
import { redisDeadLetters } from '../webhooks/redis-webhook-queue';
import { createWebhookRoutes, WEBHOOK_PATHS } from '../webhooks/webhook-routes';
import { holderAdminRoutes } from '../requests/holder-stores';
import type { OptionalListener } from './listeners';
import type { ServiceContext } from './service-context';
import { adminOn, type KeyAdministration } from './key-administration';

/** Console sessions end this long after sign-in (kept in memory: a restart signs everyone out). */
const CONSOLE_SESSION_TTL_MS = 8 * 3600_000;

export interface AdminListenerDeps extends ServiceContext {
  readonly operators: OperatorRegistry;
}

function redisAdminApp(env: Env, deps: AdminListenerDeps, administration: KeyAdministration, consoleRouter: (store: ConsoleStore) => ReturnType<typeof createConsoleRouter>, usageViews: Parameters<typeof keyAdminConsoleStore>[2]): Express {
  const { keyAdmin } = administration;
  const keyExists = (id: string): Promise<boolean> =>
    keyAdmin.show(id).then(
      () => true,
      (err: unknown) => {
        if (err instanceof ApiError && err.code === 'not_found') return false;
        throw err;
      },
    );
  const usageRoutes = createUsageRoutes(deps.usageStore, keyExists);
  const store = keyAdminConsoleStore(keyAdmin, `the Redis key store at ${deps.redis!.topology.where}`, usageViews);
  // Dead letters live in Redis (the admin API needs it), whether or not this instance delivers.
  const webhookRoutes = createWebhookRoutes(redisDeadLetters(administration.redis));
  const holders = deps.holders ? holderAdminRoutes(deps.holders.stores) : { routers: [], methods: {} };
  return createAdminApp(keyAdmin, deps.operators, deps.logger, {
    routers: [usageRoutes, webhookRoutes, ...holders.routers],
    methods: { ...USAGE_PATHS, ...WEBHOOK_PATHS, ...holders.methods },
    console: consoleRouter(store),
    allowedHosts: [env.ADMIN_HOST, ...env.ADMIN_ALLOWED_HOSTS],
  });
}

/** What the console and the portal show of a key's use: its daily history and the monthly report. */
export function usageViewsOf(usageStore: UsageStore) {
  return {
    history: (id: string, days: number) => {
      const to = dayOf(Date.now());
      return dailyUsage(usageStore, id, addDays(to, 1 - days), to);
    },
    report: (month: string) => monthlyReport(usageStore, month),
    reportCsv,
  };
}

function adminApp(env: Env, deps: AdminListenerDeps): Express {
  const usageViews = usageViewsOf(deps.usageStore);
  const consoleRouter = (store: ConsoleStore) => createConsoleRouter({
    ...(deps.holders ? { holders: deps.holders.stores } : {}),
    store,
    operators: deps.operators,
    sessions: createMemorySessionStore(CONSOLE_SESSION_TTL_MS),
    sessionTtlMs: CONSOLE_SESSION_TTL_MS,
    logger: deps.logger,
  });
  if (deps.administration) return redisAdminApp(env, deps, deps.administration, consoleRouter, usageViews);
  // The keys file is the store: the console alone, read-only, on the admin listener.
  const file = deps.keys.file!;
  return createConsoleOnlyApp(consoleRouter(fileConsoleStore({
    file: file.file, keys: () => file.current(), counters: deps.counters, audit: file.audit, usage: usageViews,
    ...(deps.holders?.accountOfKey ? { accountOf: deps.holders.accountOfKey } : {}),
  })), { allowedHosts: [env.ADMIN_HOST, ...env.ADMIN_ALLOWED_HOSTS], logger: deps.logger });
}

/** The admin listener: on when an admin token is configured (in one worker of several). */
export function adminListener(env: Env, deps: AdminListenerDeps): OptionalListener {
  const on = adminOn(env) && servesAdministration(env);
  return { message: 'admin api listening', port: on ? env.ADMIN_PORT : undefined, host: env.ADMIN_HOST, app: () => adminApp(env, deps) };
}
