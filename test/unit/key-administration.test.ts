/**
 * Key administration (the Redis key store's writer and its own connection) is started only where
 * something serves it: with GATEWAY_WORKERS > 1, the admin worker (GATEWAY_ADMIN_WORKER=1), which
 * alone serves the admin API, the portal and the providers' listener; never on the other workers.
 * Start-up waits (bounded) for its connection before those listeners open.
 */
import { EventEmitter } from 'node:events';
import Redis from 'ioredis';
import pino from 'pino';
import { parseEnv } from '../../gateway/config/env';
import { loadGatewayConfig } from '../../gateway/config/gateway-config';
import type { RedisKeyStore } from '../../gateway/keys/redis-key-store';
import { administrationReady, startKeyAdmin, type KeyAdministration } from '../../gateway/startup/key-administration';
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

describe('start-up waits for key administration\'s own connection', () => {
  const admin = (status: string) => Object.assign(new EventEmitter(), { status }) as unknown as Redis;
  const shared = (status: string) => ({ client: { status } }) as unknown as SharedRedis;

  test('while it connects, the listeners are not started: start-up waits for its ready', async () => {
    const connection = admin('connecting');
    let done = false;
    const waiting = administrationReady({ redis: connection } as unknown as KeyAdministration, shared('ready')).then(() => (done = true));
    await new Promise((r) => setTimeout(r, 50));
    expect(done).toBe(false);
    (connection as unknown as EventEmitter).emit('ready');
    await waiting;
    expect(done).toBe(true);
  });

  test('with the shared connection not up (Redis away), no second wait', async () => {
    const started = Date.now();
    await administrationReady({ redis: admin('connecting') } as unknown as KeyAdministration, shared('reconnecting'));
    expect(Date.now() - started).toBeLessThan(500);
  });
});
