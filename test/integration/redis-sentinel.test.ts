/**
 * Redis Sentinel for real: a master, its replica and three sentinels (down-after-milliseconds 1 s),
 * two gateway instances finding the master through the sentinels. Exact shared counts; the master
 * killed: no 500, no hang, counting shared and exact again after the failover (the time is printed
 * for the closing note).
 */
import type { RedisClient } from '../../gateway/redis/connect';
import { adminCall, readyAdminUrl } from '../kit/admin-api';
import { awayFromMinuteEdge, budget, expectError, eventually, getWithKey, seenByAll, startStack, type Stack } from '../kit/gateway-stack';
import { runKeysCliWith } from '../kit/keys-cli';
import { announcedUrl } from '../kit/log-lines';
import { expectFailoverRecovers } from '../kit/redis-failover';
import { connectTopology, keyProvisioner } from '../kit/redis-keys';
import { replicasCaughtUp, startSentinelSet, type SentinelSet } from '../kit/redis-topologies';

jest.setTimeout(120_000);

const ADMIN_TOKEN = 'admin-token-for-sentinel-tests-1';

let set: SentinelSet;
let stack: Stack;
let client: RedisClient;
let provision: ReturnType<typeof keyProvisioner>;
let urls: string[];

beforeAll(async () => {
  set = await startSentinelSet();
  const env = { REDIS_SENTINELS: set.sentinelList, REDIS_SENTINEL_MASTER: set.masterName, KEY_STORE: 'redis', OPS_PORT: '0' };
  stack = await startStack({ keys: [], gateways: [{ ...env, ADMIN_TOKEN, ADMIN_PORT: '0' }, env] });
  urls = stack.gateways.map((g) => g.url);
  client = await connectTopology(env);
  provision = keyProvisioner(client, stack.gatewayConfig);
});

afterAll(async () => {
  client?.disconnect();
  await stack?.stop();
  await set?.stop();
});

describe('Redis Sentinel, two instances', () => {
  it('counts per-minute limits and daily quotas exactly across both instances', async () => {
    await awayFromMinuteEdge(15_000);
    const minuteValue = await provision('sentinel-minute', { per_minute: 15 });
    const dayValue = await provision('sentinel-day', { per_day: 9 });
    const minute = await Promise.all(Array.from({ length: 25 }, (_, i) => getWithKey(urls[i % 2]!, '/v1/ping', minuteValue)));
    const day = await Promise.all(Array.from({ length: 14 }, (_, i) => getWithKey(urls[i % 2]!, '/v1/ping', dayValue)));
    expect(minute.map((a) => a.status).sort()).toEqual([...Array(15).fill(200), ...Array(10).fill(429)]);
    expect(day.map((a) => a.status).sort()).toEqual([...Array(9).fill(200), ...Array(5).fill(429)]);
    for (const a of minute.filter((x) => x.status === 429)) expectError(a, 'rate_limited');
    for (const a of day.filter((x) => x.status === 429)) expectError(a, 'quota_exceeded');
  });

  it('keys CLI and admin API changes through the sentinels are seen by both instances within a second', async () => {
    const env = { KEY_STORE: 'redis', REDIS_SENTINELS: set.sentinelList, REDIS_SENTINEL_MASTER: set.masterName, GATEWAY_CONFIG: stack.gatewayConfig };
    const cli = async (args: string[]): Promise<string> => {
      const r = await runKeysCliWith(env, args);
      expect({ args, code: r.code, stderr: r.stderr }).toEqual({ args, code: 0, stderr: '' });
      return r.stdout;
    };
    const created = await cli(['create', '--id', 'sentinel-cli', '--tier', 'standard', '--countries', 'GB', '--address', '127.0.0.1']);
    const value = created.trim().split('\n').pop()!;
    const delays = [await seenByAll(urls, value, 200, Date.now())];
    const adminUrl = await readyAdminUrl(stack.gateways[0]!, ADMIN_TOKEN);
    let since = Date.now();
    expect((await adminCall(adminUrl, ADMIN_TOKEN, 'PATCH', '/admin/keys/sentinel-cli', { addresses: ['10.0.0.1'] })).status).toBe(200);
    delays.push(await seenByAll(urls, value, 403, since));
    since = Date.now();
    await cli(['revoke', 'sentinel-cli']);
    delays.push(await seenByAll(urls, value, 401, since));
    expect((await adminCall(adminUrl, ADMIN_TOKEN, 'DELETE', '/admin/keys/sentinel-cli')).status).toBeLessThan(300);
    expect((await runKeysCliWith(env, ['show', 'sentinel-cli'])).code).not.toBe(0);
    console.log(`sentinel: key change seen by both instances after (ms, incl. the CLI's own exit): ${delays.join(', ')}`);
    // The contract's second, scaled by the load measured in this run (test/kit/timing.ts): 1 s on an idle machine.
    for (const d of delays) expect(d).toBeLessThan(budget(1000));
  });

  it('the master killed: no 500 and no hang; counting is shared and exact again after the failover', async () => {
    await awayFromMinuteEdge(20_000);
    const ops = await Promise.all(stack.gateways.map((g) => announcedUrl(g, 'ops listening')));
    const loadValue = await provision('sentinel-load');
    const LIMIT = 6;
    const burstValues: string[] = [];
    for (let i = 0; i < 14; i++) burstValues.push(await provision(`sentinel-burst-${i}`, { per_minute: LIMIT }));
    // Known to both instances before the kill, without counting (403 from another address).
    for (const value of burstValues) for (const url of urls) expect((await getWithKey(url, '/v1/ping', value, { localAddress: '127.0.0.2' })).status).toBe(403);
    await replicasCaughtUp(set.master.port); // replication is asynchronous

    await expectFailoverRecovers({
      label: 'sentinel', urls, ops, loadValue, burstValues, limit: LIMIT,
      kill: () => set.master.kill(),
      promoted: async () => {
        await eventually('a replica promoted', async () => (await set.currentMasterPort().catch(() => set.master.port)) !== set.master.port, { timeoutMs: 60_000, intervalMs: 100 });
      },
    });
  });
});
