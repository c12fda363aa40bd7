/**
 * Finding 6 of the second security round: unauthenticated traffic is budgeted per address
 * (gateway/policies/refused-auth-budget.ts). Each 401 an address causes is charged to it for the UTC
 * minute; past the budget its requests get 429 `rate_limited` (Retry-After, `RateLimit-Policy:
 * "address";q=N;w=60`) before any key look-up, so a flood of unknown keys stops costing Redis GETs.
 * On by default (60 per address and minute), configurable in gateway.yaml.
 */
import Redis from 'ioredis';
import { stringify } from 'yaml';
import {
  awayFromMinuteEdge, DEFAULT_TIERS, expectError, gatewayEnv, makeTempDir, randomKeyValue, removeTempDirs, runToExit, send, startGateway, startStack,
  writeGatewayConfig, writeKeysFile, writeTempFile, type KeySpec, type Proc, type Stack,
} from '../kit/gateway-stack';
import { keyProvisioner } from '../kit/redis-keys';
import { startRedis, type RedisServer } from '../kit/redis-server';
import { startTcpProxy, type TcpProxy } from '../kit/tcp-proxy';

const KEY: KeySpec = { id: 'budget', value: randomKeyValue('budget'), tier: 'standard', countries: ['GB'], address: '127.0.0.1', status: 'active' };

const REVOKED: KeySpec = { ...KEY, id: 'budget-revoked', value: randomKeyValue('revoked'), status: 'revoked' };

afterAll(() => removeTempDirs());

describe('on by default', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ keys: [KEY, REVOKED], refusedAuthPerMinute: null });
  }, 60_000);
  afterAll(async () => {
    await stack?.stop();
  });

  test('with no setting, the 61st refused authentication of an address in a minute is 429 rate_limited', async () => {
    await awayFromMinuteEdge(15_000);
    const statuses: number[] = [];
    for (let i = 0; i < 61; i++) statuses.push((await send(stack.url, '/v1/ping', { headers: { 'x-api-key': randomKeyValue('unknown') } })).status);
    expect(statuses.slice(0, 60)).toEqual(Array(60).fill(401));
    const over = await send(stack.url, '/v1/ping', { headers: { 'x-api-key': randomKeyValue('unknown') } });
    expectError(over, 'rate_limited');
    expect(over.headers['ratelimit-policy']).toBe('"address";q=60;w=60');
    expect(over.headers.ratelimit).toMatch(/^"address";r=0;t=\d+$/);
    // Finding 16 of the fourth round: the address's valid key is still served; a revoked one is not.
    const valid = await send(stack.url, '/v1/ping', { headers: { 'x-api-key': KEY.value } });
    process.stdout.write(`finding 16: a valid key (keys file) from an address over its budget answers ${valid.status}\n`);
    expect(valid.status).toBe(200);
    expectError(await send(stack.url, '/v1/ping', { headers: { 'x-api-key': REVOKED.value } }), 'rate_limited');
    // Another address has its own budget.
    expectError(await send(stack.url, '/v1/ping', { headers: { 'x-api-key': randomKeyValue('unknown') }, localAddress: '127.0.0.2' }), 'unauthenticated');
    // Paths and methods are still checked first: 404 and 405 are not budgeted.
    expectError(await send(stack.url, '/v1/nothing', { headers: { 'x-api-key': randomKeyValue('unknown') } }), 'not_found');
    expect((await send(stack.url, '/v1/openapi.json')).status).toBe(200);
  });
});

describe('configured, against the Redis key store', () => {
  let redisServer: RedisServer;
  let proxy: TcpProxy;
  let gateway: Proc;
  let value: string;
  beforeAll(async () => {
    redisServer = await startRedis();
    proxy = await startTcpProxy(redisServer.port, { resp: true });
    const dir = makeTempDir();
    const config = writeGatewayConfig(undefined, dir, 5);
    const direct = new Redis(redisServer.url);
    value = await keyProvisioner(direct, config)('budget-redis');
    direct.disconnect();
    gateway = await startGateway({ backendUrl: 'http://127.0.0.1:9', keysFile: writeKeysFile([], dir), gatewayConfig: config, env: { REDIS_URL: `redis://${proxy.address}`, KEY_STORE: 'redis' } });
  }, 60_000);
  afterAll(async () => {
    await gateway?.stop();
    await proxy?.close();
    await redisServer?.stop();
  });

  test('50 unknown keys from one address: 5 refused 401 (5 look-ups), then 429 with no look-up', async () => {
    await awayFromMinuteEdge(15_000);
    // A valid key first: its look-up is not charged, and it is cached. A read that raced the
    // gateway's subscription to key changes is answered but not cached (the subscription distrusts
    // what was read before it), so the key is sent until one answer came from the cache.
    const keyReads = () => proxy.commands.filter((c) => c.args[0]?.toLowerCase() === 'get' && c.args[1]?.startsWith('lgw:keyhash:')).length;
    for (let i = 0, cached = false; !cached; i++) {
      if (i === 20) throw new Error('the valid key was never served from the cache');
      const readsBefore = keyReads();
      expect((await send(gateway.url, '/v1/ping', { headers: { 'x-api-key': value } })).status).toBe(200);
      cached = i > 0 && keyReads() === readsBefore;
    }
    const lookupsBefore = keyReads();
    const statuses: number[] = [];
    for (let i = 0; i < 50; i++) statuses.push((await send(gateway.url, '/v1/ping', { headers: { 'x-api-key': randomKeyValue('flood') } })).status);
    const lookups = proxy.commands.filter((c) => c.args[0]?.toLowerCase() === 'get' && c.args[1]?.startsWith('lgw:keyhash:')).length - lookupsBefore;
    process.stdout.write(`finding 6: 50 unknown keys from one address, budget 5: ${statuses.filter((s) => s === 401).length} × 401, ${statuses.filter((s) => s === 429).length} × 429, ${lookups} key look-ups in Redis\n`);
    expect(statuses).toEqual([...Array(5).fill(401), ...Array(45).fill(429)]);
    expect(lookups).toBe(5);
    // A missing key counts as a refusal too; the address is over budget for the rest of the minute.
    expectError(await send(gateway.url, '/v1/ping'), 'rate_limited');
    // Finding 16 of the fourth round: a key the instance holds as valid (cached) is still served
    // over the budget (servers behind one NAT address), with no extra look-up in Redis for it.
    const lookupsOver = proxy.commands.filter((c) => c.args[0]?.toLowerCase() === 'get' && c.args[1]?.startsWith('lgw:keyhash:')).length;
    const valid = await send(gateway.url, '/v1/ping', { headers: { 'x-api-key': value } });
    process.stdout.write(`finding 16: a cached valid key from an address over its budget answers ${valid.status}\n`);
    expect(valid.status).toBe(200);
    // Served from the cache: no look-up, or one when the cache is refreshing that record (as under the budget).
    expect(proxy.commands.filter((c) => c.args[0]?.toLowerCase() === 'get' && c.args[1]?.startsWith('lgw:keyhash:')).length - lookupsOver).toBeLessThanOrEqual(1);
    // An unknown key is still refused before its look-up.
    expectError(await send(gateway.url, '/v1/ping', { headers: { 'x-api-key': randomKeyValue('flood') } }), 'rate_limited');
  });
});

describe('a full table, through X-Forwarded-For behind TRUST_PROXY (finding 2 of the third security round)', () => {
  let gateway: Proc;
  beforeAll(async () => {
    const dir = makeTempDir();
    // A small table, so the test fills it with 20 addresses instead of 100,000.
    const config = writeTempFile('gateway.yaml', stringify({ tiers: DEFAULT_TIERS, refused_authentication: { per_address_per_minute: 3, tracked_per_minute: 20 } }), dir);
    gateway = await startGateway({ backendUrl: 'http://127.0.0.1:9', keysFile: writeKeysFile([KEY], dir), gatewayConfig: config, env: { TRUST_PROXY: '127.0.0.1/32' } });
  }, 60_000);
  afterAll(async () => {
    await gateway?.stop();
  });

  const from = (address: string): Promise<number> =>
    send(gateway.url, '/v1/ping', { headers: { 'x-api-key': randomKeyValue('spray'), 'x-forwarded-for': address } }).then((a) => a.status);

  test('21 addresses fill a table of 20: a fresh address is still refused 429 after its network\'s budget, never unbudgeted', async () => {
    await awayFromMinuteEdge(15_000);
    for (let i = 0; i < 20; i++) expect(await from(`198.18.${i}.1`)).toBe(401);
    const statuses: number[] = [];
    for (let i = 0; i < 10; i++) statuses.push(await from('203.0.113.9'));
    process.stdout.write(`finding 2 (round 3): table full, a fresh address gets ${statuses.filter((s) => s === 401).length} × 401 then 429\n`);
    expect(statuses).toEqual([...Array(3).fill(401), ...Array(7).fill(429)]);
    // Its /24 shares that budget; an address charged before the table filled keeps its own.
    expect(await from('203.0.113.77')).toBe(429);
    expect(await from('198.18.0.1')).toBe(401);
  });
});

test('a bad budget in gateway.yaml stops start-up with one line naming the field', async () => {
  const dir = makeTempDir();
  const config = writeTempFile('gateway.yaml', stringify({ tiers: DEFAULT_TIERS, refused_authentication: { per_address_per_minute: -1 } }), dir);
  const r = await runToExit('gateway/main.js', gatewayEnv(writeKeysFile([KEY], dir), config));
  expect(r.code).toBe(1);
  expect(r.stderr.trim().split('\n')).toEqual([expect.stringMatching(/gateway\.yaml.*refused_authentication\.per_address_per_minute/)]);
});
