/**
 * Start-up's look at Redis: with keys in the Redis key store it is ready (its probe read the ids
 * set with GET, a WRONGTYPE that logged "redis not reachable" on every start once a key existed);
 * a REDIS_SENTINEL_MASTER no sentinel knows is refused with one line (it was taken for an outage,
 * "away" forever, and the gateway served without Redis).
 */
import Redis from 'ioredis';
import { gatewayEnv, makeTempDir, removeTempDirs, runToExit, writeGatewayConfig, writeKeysFile } from '../kit/gateway-stack';
import { startProcess } from '../kit/processes';
import { startRedis, type RedisServer } from '../kit/redis-server';
import { startSentinelSet, type SentinelSet } from '../kit/redis-topologies';

jest.setTimeout(90_000);

let redisServer: RedisServer | undefined;
let set: SentinelSet | undefined;

afterAll(async () => {
  await redisServer?.stop();
  await set?.stop();
  removeTempDirs();
});

const env = (extra: Record<string, string>): Record<string, string> => {
  const dir = makeTempDir();
  return gatewayEnv(writeKeysFile([], dir), writeGatewayConfig(undefined, dir), extra);
};

it('with a key in the Redis key store, start-up finds Redis ready (no "redis not reachable")', async () => {
  redisServer = await startRedis();
  const redis = new Redis(redisServer.url);
  await redis.sadd('lgw:keys', 'some-key-id'); // the ids set, as the key store keeps it
  redis.disconnect();
  const gateway = await startProcess('gateway/main.js', env({ REDIS_URL: redisServer.url, KEY_STORE: 'redis' }), 30_000);
  try {
    expect(gateway.output.filter((l) => l.includes('not reachable'))).toEqual([]);
    expect(gateway.output.some((l) => l.includes('"msg":"redis connected"'))).toBe(true);
  } finally {
    await gateway.stop();
  }
});

it('a REDIS_SENTINEL_MASTER no sentinel knows is refused at start-up with one line', async () => {
  set = await startSentinelSet();
  const result = await runToExit('gateway/main.js', env({ REDIS_SENTINELS: set.sentinelList, REDIS_SENTINEL_MASTER: 'no-such-master', KEY_STORE: 'redis' }), 30_000);
  expect(result.code).toBe(1);
  const lines = result.stderr.trim().split('\n');
  expect(lines).toHaveLength(1);
  expect(lines[0]).toBe(`config error: environment variable REDIS_SENTINEL_MASTER: no sentinel knows a master named "no-such-master" (asked ${set.sentinelList.split(',').join(', ')})`);
  // The right name starts (control).
  const gateway = await startProcess('gateway/main.js', env({ REDIS_SENTINELS: set.sentinelList, REDIS_SENTINEL_MASTER: set.masterName, KEY_STORE: 'redis' }), 30_000);
  try {
    expect(gateway.output.filter((l) => l.includes('not reachable'))).toEqual([]);
  } finally {
    await gateway.stop();
  }
});
