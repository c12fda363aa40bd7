/**
 * Key administration (the Redis key store's writer and its own connection) is started only where
 * something serves it: with GATEWAY_WORKERS > 1, the admin worker (GATEWAY_ADMIN_WORKER=1), which
 * alone serves the admin API, the portal and the providers' listener; never on the other workers.
 */
import Redis from 'ioredis';
import pino from 'pino';
import { parseEnv } from '../../gateway/config/env';
import { loadGatewayConfig } from '../../gateway/config/gateway-config';
import type { RedisKeyStore } from '../../gateway/keys/redis-key-store';
import { startKeyAdmin } from '../../gateway/startup/key-administration';
import type { KeyStores } from '../../gateway/startup/key-store';
import type { SharedRedis } from '../../gateway/startup/redis-and-counters';
import { ROOT } from '../kit/processes';

const config = loadGatewayConfig(`${ROOT}/config/gateway.yaml`);
const keys = { keyStore: {}, redisStore: {} } as unknown as KeyStores & { redisStore: RedisKeyStore };
const logger = pino({ level: 'silent' });

function sharedRedis() {
  const made: Redis[] = [];
  const shared = { connect: () => {
    const client = new Redis({ lazyConnect: true, enableOfflineQueue: false });
    made.push(client);
    return client;
  } } as unknown as SharedRedis;
  return { shared, made };
}

const env = (extra: Record<string, string>) => parseEnv({ CURSOR_SECRET: 'c'.repeat(43), REDIS_URL: 'redis://127.0.0.1:1', KEY_STORE: 'redis', ADMIN_TOKEN: 'admin-token-0123456789abcdef', ...extra });

test.each([
  ['a worker that is not the admin worker: none, no connection made', { GATEWAY_ADMIN_WORKER: '0' }, 0],
  ['the admin worker: one, on its own connection', { GATEWAY_ADMIN_WORKER: '1' }, 1],
  ['a single process: one, on its own connection', {}, 1],
])('%s', (_name, extra, expected) => {
  const { shared, made } = sharedRedis();
  const administration = startKeyAdmin(env(extra), config, shared, keys, logger, true);
  expect(made).toHaveLength(expected);
  expect(administration !== undefined).toBe(expected === 1);
  for (const client of made) client.disconnect();
});
