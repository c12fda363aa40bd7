import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { createApp } from './app';
import { ConfigError } from './config/config-error';
import { parseEnv } from './config/env';
import { loadGatewayConfig } from './config/gateway-config';
import { createCursorCodec } from './cursor/cursor-codec';
import { createFileKeyStore } from './keys/file-key-store';
import { loadKeysFile } from './keys/keys-file';
import { createMemoryCounters } from './limits/memory-counters';
import { createLogger } from './logging';
import { createServer } from './server';
import { createListingsClient } from './upstream/listings-client';

/** In-flight requests get this long to finish after SIGTERM. */
const SHUTDOWN_GRACE_MS = 10_000;

/** Start-up: configuration, dependencies, app, listen. A bad configuration exits 1 with one line. */
function main(): void {
  let env, gatewayConfig, keyRecords;
  try {
    env = parseEnv();
    if (env.KEY_STORE === 'redis' || env.REDIS_URL) {
      throw new ConfigError('environment variable REDIS_URL / KEY_STORE=redis: the Redis counters and key store are not part of this build yet');
    }
    gatewayConfig = loadGatewayConfig(env.GATEWAY_CONFIG);
    keyRecords = loadKeysFile(env.KEYS_FILE, gatewayConfig);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    process.stderr.write(`config error: ${err.message}\n`);
    process.exit(1);
  }

  const logger = createLogger(env.LOG_LEVEL);
  const cursorSecret = env.CURSOR_SECRET ?? randomBytes(32).toString('base64url');
  if (!env.CURSOR_SECRET) {
    logger.warn('CURSOR_SECRET is not set: using a random secret, so cursors die with this process and are not shared between instances');
  }
  const listings = createListingsClient({ baseUrl: env.BACKEND_URL, timeoutMs: env.UPSTREAM_TIMEOUT_MS });
  const app = createApp({
    logger,
    keyStore: createFileKeyStore(keyRecords),
    counters: createMemoryCounters(),
    cursors: createCursorCodec({ encryptionSecret: cursorSecret, previousSecrets: env.CURSOR_PREVIOUS_SECRETS, ttlSeconds: env.CURSOR_TTL_SECONDS }),
    listings,
    trustedProxies: env.TRUST_PROXY,
  });

  const server = createServer(app);
  server.listen(env.PORT, env.HOST, () => {
    const { port, address } = server.address() as AddressInfo;
    logger.info({ port, host: address, keys: keyRecords.length, backend: env.BACKEND_URL }, 'listening');
  });
  server.on('error', (err) => {
    logger.fatal({ err }, 'cannot listen');
    logger.flush();
    process.exitCode = 1;
  });

  let stopping = false;
  const stop = (signal: string): void => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    const force = setTimeout(() => server.closeAllConnections(), SHUTDOWN_GRACE_MS).unref();
    server.close(() => {
      clearTimeout(force);
      void listings.close().finally(() => {
        logger.info('stopped');
        logger.flush(() => process.exit(0));
      });
    });
    server.closeIdleConnections();
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

main();
