// gateway/startup/: start-up's steps, one idea a file, in main.ts's order: configuration, ops, Redis and
// counters, key store, usage and webhooks, serving, administration, reloads, listeners, shutdown.
/**
 * Start-up's first step: the environment and every configuration file read and validated. A problem
 * stops start-up with one line naming the file or variable, the entry and the field (exit 1).
 */
import { defined } from '../defined';
import { ConfigError } from '../config/config-error';
import { parseEnv, type Env } from '../config/env';
import { loadGatewayConfig, type GatewayConfig } from '../config/gateway-config';
import type { FileKey } from '../keys/keys-file';
import { readKeysFileOffThread } from '../keys/keys-file-loader';
import { loadOperatorTokens, type OperatorTokenEntry } from '../operators/operator-tokens';
import { readKeysFileAccounts } from '../accounts/keys-file-accounts';
import { parsePortalEnv, type PortalEnv } from '../config/portal-env';
import { parseHooksEnv, type HooksEnv } from '../config/hooks-env';
import { parseLeaksEnv, type LeaksEnv } from '../config/leaks-env';

export interface Configuration {
  readonly env: Env;
  readonly gatewayConfig: GatewayConfig;
  /** The keys file's keys when it is the key store (KEY_STORE=file). */
  readonly fileKeys?: FileKey[];
  readonly operatorTokens: OperatorTokenEntry[];
  /** The key holders' portal, when PORTAL_PORT is set. */
  readonly portal?: PortalEnv;
  /** The providers' listener (HOOKS_PORT) and the providers on it. */
  readonly hooks: HooksEnv;
  /** Where GitHub's keys for leaked-key reports come from. */
  readonly leaks: LeaksEnv;
}

/** The insights service verifies the caller identity the gateway signs: no area without a secret. */
export function requireInsightsSecret(env: Env, config: GatewayConfig): void {
  if (config.insightsUpstream && !env.INSIGHTS_IDENTITY_SECRET) {
    throw new ConfigError(`environment variable INSIGHTS_IDENTITY_SECRET: required when ${env.GATEWAY_CONFIG} sets insights.upstream (base64url of 32 bytes, shared with the insights service)`);
  }
}

/** The gateway configuration as a reload reads it: the file, checked against the environment. */
export function readGatewayConfig(env: Env): GatewayConfig {
  const config = loadGatewayConfig(env.GATEWAY_CONFIG, env.BACKEND_URL);
  requireInsightsSecret(env, config);
  return config;
}

/** The operator tokens file's entries (the name `admin` is ADMIN_TOKEN's when that is set). */
export const readOperatorTokens = (env: Env, file: string): OperatorTokenEntry[] => loadOperatorTokens(file, env.ADMIN_TOKEN ? ['admin'] : []);

/**
 * Reads and validates the configuration; a problem exits 1 with one line naming file, entry, field.
 * Start-up waits for the keys file (read in the reader process: signals are handled meanwhile).
 */
export async function loadConfiguration(): Promise<Configuration> {
  try {
    const env = parseEnv();
    const portal = parsePortalEnv();
    const hooks = parseHooksEnv();
    const leaks = parseLeaksEnv();
    if (hooks.stripe && env.KEY_STORE !== 'redis') {
      throw new ConfigError('environment variable STRIPE_WEBHOOK_SECRET: needs KEY_STORE=redis (Stripe\'s events change keys; the keys file is read-only to the gateway)');
    }
    const gatewayConfig = readGatewayConfig(env);
    const fileKeys = env.KEY_STORE === 'file' ? await readKeysFileOffThread(env.KEYS_FILE, gatewayConfig) : undefined;
    if (env.KEY_STORE === 'file') readKeysFileAccounts(env.KEYS_FILE); // its `accounts:` list: a bad one stops start-up
    const operatorTokens = env.ADMIN_TOKENS_FILE ? readOperatorTokens(env, env.ADMIN_TOKENS_FILE) : [];
    return { env, gatewayConfig, operatorTokens, ...defined({ fileKeys, portal }), hooks, leaks };
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    process.stderr.write(`config error: ${err.message}\n`);
    process.exit(1);
  }
}
