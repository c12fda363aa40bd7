import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import type Redis from 'ioredis';
import { createAdminApp } from './admin/admin-app';
import { createApp } from './app';
import { ConfigError } from './config/config-error';
import { parseEnv, type Env } from './config/env';
import { loadGatewayConfig, type GatewayConfig } from './config/gateway-config';
import { createCursorCodec } from './cursor/cursor-codec';
import { createFileKeyStore } from './keys/file-key-store';
import { createKeyAdmin } from './keys/key-admin';
import type { KeyStore } from './keys/key-record';
import { loadKeysFile } from './keys/keys-file';
import { createRedisKeyStore } from './keys/redis-key-store';
import type { Counters } from './limits/counters';
import { createMemoryCounters } from './limits/memory-counters';
import { createRedisCounters } from './limits/redis-counters';
import { createResilientCounters } from './limits/resilient-counters';
import { createLogger } from './logging';
import { connectRedis, whenReady } from './redis/connect';
import { createServer } from './server';
import { createListingsClient } from './upstream/listings-client';
import type { Logger } from 'pino';

/** In-flight requests get this long to finish after SIGTERM. */
const SHUTDOWN_GRACE_MS = 10_000;
/** Start-up waits this long for Redis before serving anyway (degraded: /readyz will say so). */
const REDIS_STARTUP_WAIT_MS = 3_000;

/** Reads and validates every piece of configuration; a problem exits 1 with one line. */
function loadConfiguration(): { env: Env; gatewayConfig: GatewayConfig } {
  try {
    const env = parseEnv();
    const gatewayConfig = loadGatewayConfig(env.GATEWAY_CONFIG);
    return { env, gatewayConfig };
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    process.stderr.write(`config error: ${err.message}\n`);
    process.exit(1);
  }
}

function loadFileKeys(env: Env, gatewayConfig: GatewayConfig): KeyStore {
  try {
    return createFileKeyStore(loadKeysFile(env.KEYS_FILE, gatewayConfig));
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    process.stderr.write(`config error: ${err.message}\n`);
    process.exit(1);
  }
}

function listen(server: Server, port: number, host: string, logger: Logger, message: string, fields: object = {}): void {
  server.listen(port, host, () => {
    const address = server.address() as AddressInfo;
    logger.info({ ...fields, port: address.port, host: address.address }, message);
  });
  server.on('error', (err) => {
    logger.fatal({ err }, `cannot listen (${message})`);
    logger.flush(() => process.exit(1));
  });
}

/** Start-up: configuration, dependencies, app, listen; and a graceful stop on SIGTERM. */
async function main(): Promise<void> {
  const { env, gatewayConfig } = loadConfiguration();
  const logger = createLogger(env.LOG_LEVEL);
  const redisClients: Redis[] = [];
  const connect = (role: string, autoPipelining = true): Redis => {
    const client = connectRedis(env.REDIS_URL!, logger, role, { commandTimeoutMs: env.REDIS_COMMAND_TIMEOUT_MS, autoPipelining });
    redisClients.push(client);
    return client;
  };

  const memoryCounters = createMemoryCounters();
  let counters: Counters = memoryCounters;
  let keyStore: KeyStore;
  let redis: Redis | undefined;
  if (env.REDIS_URL) {
    redis = connect('commands');
    counters = createResilientCounters(createRedisCounters(redis), memoryCounters, redis, logger);
    if (!(await whenReady(redis, REDIS_STARTUP_WAIT_MS))) logger.warn('redis not reachable at start-up: counting per instance until it is');
  }
  if (env.KEY_STORE === 'redis') {
    keyStore = createRedisKeyStore(redis!, connect('key-changes'), gatewayConfig, logger);
  } else {
    keyStore = loadFileKeys(env, gatewayConfig);
  }

  const cursorSecret = env.CURSOR_SECRET ?? randomBytes(32).toString('base64url');
  if (!env.CURSOR_SECRET) {
    logger.warn('CURSOR_SECRET is not set: using a random secret, so cursors die with this process and are not shared between instances');
  }
  const listings = createListingsClient({ baseUrl: env.BACKEND_URL, timeoutMs: env.UPSTREAM_TIMEOUT_MS });
  const app = createApp({
    logger,
    keyStore,
    counters,
    cursors: createCursorCodec({ encryptionSecret: cursorSecret, previousSecrets: env.CURSOR_PREVIOUS_SECRETS, ttlSeconds: env.CURSOR_TTL_SECONDS }),
    listings,
    trustedProxies: env.TRUST_PROXY,
  });

  const servers: Server[] = [];
  const server = createServer(app);
  servers.push(server);
  listen(server, env.PORT, env.HOST, logger, 'listening', { backend: env.BACKEND_URL, key_store: env.KEY_STORE, counters: env.REDIS_URL ? 'redis' : 'memory' });

  if (env.ADMIN_TOKEN) {
    const adminServer = createServer(createAdminApp(createKeyAdmin(connect('admin', false), gatewayConfig), env.ADMIN_TOKEN, logger));
    servers.push(adminServer);
    listen(adminServer, env.ADMIN_PORT, env.ADMIN_HOST, logger, 'admin api listening');
  }

  let stopping = false;
  const stop = (signal: string): void => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    const force = setTimeout(() => servers.forEach((s) => s.closeAllConnections()), SHUTDOWN_GRACE_MS).unref();
    Promise.all(servers.map((s) => new Promise<void>((resolve) => {
      s.close(() => resolve());
      s.closeIdleConnections();
    })))
      .then(() => listings.close())
      .then(() => Promise.all(redisClients.map((c) => c.quit().catch(() => c.disconnect()))))
      .finally(() => {
        clearTimeout(force);
        logger.info('stopped');
        logger.flush(() => process.exit(0));
      });
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

void main();
