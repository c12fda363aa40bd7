/**
 * Demo keys never reach production silently (docs/guarantees.md): a gateway that loads one while
 * listening beyond loopback logs a warning naming it (from the keys file or from Redis), and
 * `keys import` refuses them unless told `--allow-demo`.
 */
import path from 'node:path';
import Redis from 'ioredis';
import { closedPort, makeTempDir, removeTempDirs, startGateway, writeGatewayConfig, type Proc } from '../kit/gateway-stack';
import { runKeysCli } from '../kit/keys-cli';
import { waitForLine } from '../kit/log-lines';
import { ROOT } from '../kit/processes';
import { startRedis, type RedisServer } from '../kit/redis-server';

const DEMO_FILE = path.join(ROOT, 'config/demo-keys.yaml');
const DEMO_IDS = ['demo-standard', 'demo-advanced', 'demo-paused', 'demo-revoked', 'demo-elsewhere'];
const DEMO_VALUES = ['demo-standard-7Qx2mR9vK4', 'demo-advanced-3Lp8nW6tJ1', 'demo-paused-9Hc4sD2fG7', 'demo-revoked-5Bv7kN1qZ8', 'demo-elsewhere-2Mx6yT4rP3'];
let gatewayConfig: string;
let backendUrl: string;
const started: Proc[] = [];

beforeAll(async () => {
  gatewayConfig = writeGatewayConfig(undefined, makeTempDir());
  backendUrl = `http://127.0.0.1:${await closedPort()}`;
});
afterAll(async () => {
  await Promise.all(started.map((g) => g.stop()));
  removeTempDirs();
});

async function gatewayOn(host: string, env: Record<string, string> = {}): Promise<Proc> {
  const g = await startGateway({ backendUrl, keysFile: DEMO_FILE, gatewayConfig, env: { HOST: host, ...env } });
  started.push(g);
  return g;
}

const warnings = (g: Proc): string[] => g.output.filter((l) => l.includes('"reason":"demo_keys_exposed"'));

test('keys file: on a non-loopback address the demo keys are named in a warning, on loopback not', async () => {
  const exposed = await gatewayOn('0.0.0.0');
  const line = JSON.parse(await waitForLine(exposed, '"reason":"demo_keys_exposed"')) as Record<string, unknown>;
  expect(line).toMatchObject({ level: 'warn', key_ids: DEMO_IDS, host: '0.0.0.0' });
  expect(line.msg).toContain('demo-standard');
  for (const value of DEMO_VALUES) expect(exposed.output.join('\n')).not.toContain(value);

  const local = await gatewayOn('127.0.0.1');
  await waitForLine(local, '"msg":"listening"');
  expect(warnings(local)).toEqual([]);
}, 30_000);

describe('with Redis', () => {
  let redisServer: RedisServer;
  beforeAll(async () => {
    redisServer = await startRedis();
  });
  afterAll(async () => {
    await redisServer?.stop();
  });

  test('keys import refuses demo keys in one line and imports nothing; --allow-demo imports them', async () => {
    const refused = await runKeysCli(redisServer.url, ['import', DEMO_FILE]);
    expect(refused.code).toBe(1);
    expect(refused.stderr.trim().split('\n')).toHaveLength(1);
    expect(refused.stderr).toContain('holds demo keys');
    for (const id of DEMO_IDS) expect(refused.stderr).toContain(id);
    expect(JSON.parse((await runKeysCli(redisServer.url, ['list'])).stdout)).toEqual([]);

    const allowed = await runKeysCli(redisServer.url, ['import', DEMO_FILE, '--allow-demo']);
    expect(allowed).toMatchObject({ code: 0, stdout: expect.stringContaining('imported 5 keys') });
  });

  test('a gateway on the Redis key store names the demo keys it finds there', async () => {
    const redis = new Redis(redisServer.url);
    expect(await redis.scard('lgw:keys')).toBe(5);
    redis.disconnect();
    const g = await gatewayOn('0.0.0.0', { REDIS_URL: redisServer.url, KEY_STORE: 'redis' });
    const line = JSON.parse(await waitForLine(g, '"reason":"demo_keys_exposed"')) as { key_ids: string[] };
    expect([...line.key_ids].sort()).toEqual([...DEMO_IDS].sort());
  }, 30_000);
});
