/**
 * Hot reloads: the one place that knows every part a reload reaches. On a change of a watched file
 * or on SIGHUP, the gateway config (and the keys file when it is the key store) is read and checked
 * whole, then applied in one step; a file that fails is refused with one line and the running
 * configuration keeps serving. Operator tokens reload on their own: a broken tokens file must not
 * hold back a keys-file change.
 */
import type { Logger } from 'pino';
import type { Env } from '../config/env';
import { DEFAULT_QUOTA_THRESHOLDS, DEFAULT_REFUSED_AUTH_PER_MINUTE, type GatewayConfig } from '../config/gateway-config';
import { createReloader, type Reloader } from '../config/reloader';
import { DEFAULT_REFUSED_AUTH_TRACKED } from '../limits/refused-auth-table';
import { readKeysFileOffThread } from '../keys/keys-file-loader';
import type { Metrics } from '../ops/metrics';
import type { OperatorRegistry } from '../operators/operator-tokens';
import type { Webhooks } from '../webhooks/start-webhooks';
import type { KeyAdministration } from './key-administration';
import { readGatewayConfig, readOperatorTokens } from './configuration';
import type { KeyStores } from './key-store';
import type { Serving } from './serving';
import type { ProcessSignals } from './signals';

/** Every part a reload reaches. */
export interface Reloadable {
  readonly keys: KeyStores;
  readonly serving: Serving;
  readonly administration?: KeyAdministration;
  readonly webhooks?: Webhooks;
  readonly operators: OperatorRegistry;
  /** The portal's self-service policy (the gateway YAML's `portal.self_service`). */
  readonly selfService: { update(next: GatewayConfig['selfService']): void };
  /** What Stripe's events do (the gateway YAML's `billing.stripe`). */
  readonly stripeBilling?: { update(next: GatewayConfig['stripeBilling']): void };
}

export interface Reloads {
  /** Reloads every file now (SIGHUP). */
  reload(reason: string): void;
  close(): void;
}

/** Applies a checked gateway configuration to every part that uses it. */
function applyConfig(parts: Reloadable, next: GatewayConfig): void {
  const { serving } = parts;
  parts.keys.redisStore?.updateConfig(next);
  parts.administration?.keyAdmin.updateConfig(next);
  parts.webhooks?.watcher.update(next.quotaThresholds ?? DEFAULT_QUOTA_THRESHOLDS);
  serving.stores.update(next.stores);
  const budget = next.refusedAuthPerMinute ?? DEFAULT_REFUSED_AUTH_PER_MINUTE;
  const tracked = next.refusedAuthTracked ?? DEFAULT_REFUSED_AUTH_TRACKED;
  if (budget !== serving.refusedAuth.perMinute || tracked !== serving.refusedAuth.tracked) serving.refusedAuth.update(budget, tracked);
  serving.insights.update(next.insightsUpstream);
  parts.selfService.update(next.selfService);
  parts.stripeBilling?.update(next.stripeBilling);
}

/** The gateway config always, the keys file when it is the key store. */
function configReloader(env: Env, parts: Reloadable, logger: Logger, metrics: Metrics): Reloader {
  const file = parts.keys.file;
  return createReloader(
    file ? [env.GATEWAY_CONFIG, file.file] : [env.GATEWAY_CONFIG],
    async () => {
      const nextConfig = readGatewayConfig(env);
      // Read and checked in the reader process: requests are answered meanwhile.
      const swapKeys = file ? await file.prepare(await readKeysFileOffThread(file.file, nextConfig)) : undefined;
      return async () => {
        // One synchronous step: the keys and the configuration swapped between two requests.
        const audited = swapKeys?.();
        applyConfig(parts, nextConfig);
        await audited;
      };
    },
    logger,
    (applied) => metrics.reloads.inc({ result: applied ? 'applied' : 'refused' }),
  );
}

function tokensReloader(env: Env, operators: OperatorRegistry, logger: Logger): Reloader | undefined {
  const tokensFile = env.ADMIN_TOKENS_FILE;
  if (!tokensFile) return undefined;
  return createReloader([tokensFile], () => {
    const next = readOperatorTokens(env, tokensFile);
    return () => operators.replace(next);
  }, logger.child({ file: 'ADMIN_TOKENS_FILE' }));
}

export function startReloads(env: Env, parts: Reloadable, signals: ProcessSignals, logger: Logger, metrics: Metrics): Reloads {
  const reloaders = [configReloader(env, parts, logger, metrics), tokensReloader(env, parts.operators, logger)].filter((r) => r !== undefined);
  const reloads: Reloads = {
    reload: (reason) => reloaders.forEach((r) => r.reload(reason)),
    close: () => reloaders.forEach((r) => r.close()),
  };
  signals.onReload((reason) => reloads.reload(reason));
  return reloads;
}
