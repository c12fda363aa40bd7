/**
 * A write that Redis ran but whose answer was lost with the connection is not written again after
 * the reconnect (ioredis re-sends unanswered commands by default): a request's counter consume is
 * counted once, a usage flush is added once. The gateway reaches Redis through a TCP proxy that
 * delays both ways; the connection is reset after Redis has run the write (seen directly in Redis)
 * and before its answer reached the gateway.
 */
import Redis from 'ioredis';
import {
  gatewayEnv, getWithKey, makeTempDir, randomKeyValue, removeTempDirs, UNLIMITED, writeGatewayConfig, writeKeysFile, type KeySpec,
} from '../kit/gateway-stack';
import { startProcess, type RunningProcess } from '../kit/processes';
import { countedInMinutes, usageToday } from '../kit/redis-keys';
import { startRedis, type RedisServer } from '../kit/redis-server';
import { startTcpProxy, type TcpProxy } from '../kit/tcp-proxy';
import { eventually } from '../kit/timing';

jest.setTimeout(90_000);

/** Each way through the proxy takes this long while the cut is prepared. */
const DELAY_MS = 1500;

let redisServer: RedisServer;
let redis: Redis;
const started: Array<{ gateway: RunningProcess; proxy: TcpProxy }> = [];

beforeAll(async () => {
  redisServer = await startRedis();
  redis = new Redis(redisServer.url);
});

afterAll(async () => {
  for (const { gateway, proxy } of started) {
    await gateway.stop();
    await proxy.close();
  }
  redis.disconnect();
  await redisServer.stop();
  removeTempDirs();
});

/** A gateway with the keys file and its Redis (counters, usage) behind a proxy of its own. */
async function gatewayBehindProxy(key: KeySpec, extra: Record<string, string>): Promise<{ gateway: RunningProcess; proxy: TcpProxy }> {
  const proxy = await startTcpProxy(redisServer.port, { resp: true });
  const dir = makeTempDir();
  const gateway = await startProcess('gateway/main.js', gatewayEnv(writeKeysFile([key], dir), writeGatewayConfig(undefined, dir), {
    REDIS_URL: `redis://${proxy.address}`,
    // Longer than the cut takes: the write is not given up on before the connection drops.
    REDIS_COMMAND_TIMEOUT_MS: String(4 * DELAY_MS),
    ...extra,
  }), 30_000);
  started.push({ gateway, proxy });
  return { gateway, proxy };
}

/**
 * Delays the proxy, runs `send`, waits until Redis has run the write (`applied` says so), then resets
 * the connection before the delayed answer is delivered, and lets reconnections through again.
 */
async function cutAfterApplied(proxy: TcpProxy, send: () => Promise<unknown>, applied: () => Promise<boolean>): Promise<void> {
  proxy.delay(DELAY_MS);
  const sent = send();
  await eventually('Redis has run the write', applied, { timeoutMs: 10 * DELAY_MS, intervalMs: 10 });
  const connections = Math.max(0, ...proxy.commands.map((c) => c.connection));
  proxy.reset();
  await new Promise((r) => setTimeout(r, 200));
  proxy.pass();
  await sent;
  // Reconnected: a new connection has spoken (ioredis' ready check), and any re-sent command with it.
  await eventually('a new connection has spoken', () => proxy.commands.some((c) => c.connection > connections));
  await new Promise((r) => setTimeout(r, 1000));
}

it('a counter consume run by Redis whose answer is lost is not run again after the reconnect: the request is counted once', async () => {
  const key: KeySpec = { id: 'resend-counter', value: randomKeyValue('resend-counter'), tier: 'standard', countries: ['GB'], address: '127.0.0.1', status: 'active', limits: UNLIMITED };
  const { gateway, proxy } = await gatewayBehindProxy(key, { USAGE_HISTORY: 'off' });
  const minuteCount = (): Promise<number> => countedInMinutes(redis, key.id);
  expect((await getWithKey(gateway.url, '/v1/ping', key.value)).status).toBe(200);
  expect(await minuteCount()).toBe(1);
  let status = 0;
  await cutAfterApplied(
    proxy,
    async () => (status = (await getWithKey(gateway.url, '/v1/ping', key.value)).status),
    async () => (await minuteCount()) === 2,
  );
  // The request is answered (its consume failed: counted per instance), and counted once in Redis, not twice (re-sent).
  expect(status).toBe(200);
  expect(await minuteCount()).toBe(2);
});

it('a usage flush run by Redis whose answer is lost is not run again after the reconnect: usage is added once', async () => {
  const key: KeySpec = { id: 'resend-usage', value: randomKeyValue('resend-usage'), tier: 'standard', countries: ['GB'], address: '127.0.0.1', status: 'active', limits: UNLIMITED };
  const { gateway, proxy } = await gatewayBehindProxy(key, { USAGE_HISTORY: 'on', USAGE_FLUSH_MS: '500' });
  const accepted = (): Promise<number> => usageToday(redis, key.id);
  for (let i = 0; i < 3; i++) expect((await getWithKey(gateway.url, '/v1/ping', key.value)).status).toBe(200);
  await eventually('3 requests in the usage history', async () => (await accepted()) === 3);
  // Five more requests, flushed together while the proxy is slow: the flush's HINCRBY is cut after Redis ran it.
  await cutAfterApplied(
    proxy,
    async () => {
      const answers = await Promise.all(Array.from({ length: 5 }, () => getWithKey(gateway.url, '/v1/ping', key.value)));
      expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200, 200]);
    },
    async () => (await accepted()) === 8,
  );
  expect(await accepted()).toBe(8);
});
