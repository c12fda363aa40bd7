/**
 * A real Redis Cluster (3 masters, 3 replicas, cluster-node-timeout 1 s) under three gateway
 * instances, each seeded with a different node: exact per-minute and daily counts for keys on every
 * master, a cursor across instances, key changes by the CLI and the admin API seen by all within a
 * second, one node given as REDIS_URL refused, and a master killed: no 500, no hang, counting shared
 * and exact again after the promotion (the time is printed for the closing note).
 */
import { adminCall, readyAdminUrl } from '../kit/admin-api';
import type { RedisClient } from '../../gateway/redis/connect';
import {
  budget,
  awayFromMinuteEdge, expectError, gatewayEnv, seenByAll as seenByAllOf, getWithKey, runToExit, startStack, writeGatewayConfig, writeKeysFile,
  type Answer, type Stack,
} from '../kit/gateway-stack';
import { announcedUrl } from '../kit/log-lines';
import { expectFailoverRecovers } from '../kit/redis-failover';
import { connectTopology, keyProvisioner } from '../kit/redis-keys';
import { replicasCaughtUp, startRedisCluster, type RedisCluster, type RedisNode } from '../kit/redis-topologies';
import { runKeysCliWith } from '../kit/keys-cli';

jest.setTimeout(120_000);

const ADMIN_TOKEN = 'admin-token-for-cluster-tests-01';
let cluster: RedisCluster;
let stack: Stack;
let client: RedisClient;
let provision: ReturnType<typeof keyProvisioner>;
let urls: string[];

beforeAll(async () => {
  cluster = await startRedisCluster();
  // Each instance knows one node only: the rest it learns from the cluster.
  const seeds = [0, 2, 4].map((i) => cluster.seeds([cluster.nodes[i]!]));
  stack = await startStack({
    keys: [],
    gateways: seeds.map((seed, i) => ({
      REDIS_CLUSTER_NODES: seed,
      KEY_STORE: 'redis',
      OPS_PORT: '0',
      ...(i === 0 ? { ADMIN_TOKEN, ADMIN_PORT: '0' } : {}),
    })),
  });
  urls = stack.gateways.map((g) => g.url);
  client = await connectTopology({ REDIS_CLUSTER_NODES: seeds[1]! });
  provision = keyProvisioner(client, stack.gatewayConfig);
});

afterAll(async () => {
  client?.disconnect();
  await stack?.stop();
  await cluster?.stop();
});

/** The cluster slot of a key id (its counters' hash tag). */
const slotOf = async (id: string): Promise<number> => Number(await client.call('CLUSTER', 'KEYSLOT', id));

/** Key ids with the given prefix, one on each master. */
async function idsOnEveryMaster(prefix: string): Promise<string[]> {
  const byMaster = new Map<number, string>();
  for (let i = 0; byMaster.size < 3; i++) {
    const id = `${prefix}-${i}`;
    const master = await cluster.masterOf(await slotOf(id));
    if (!byMaster.has(master.port)) byMaster.set(master.port, id);
  }
  return [...byMaster.values()];
}

/** Key ids served by `master`. */
async function idsOn(master: RedisNode, prefix: string, count: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; ids.length < count; i++) {
    const id = `${prefix}-${i}`;
    if ((await cluster.masterOf(await slotOf(id))) === master) ids.push(id);
  }
  return ids;
}

/** Every instance looks the key up once, from another address (403 before the limit step: nothing counted). */
async function warm(values: string[]): Promise<void> {
  for (const value of values) for (const url of urls) expect((await getWithKey(url, '/v1/ping', value, { localAddress: '127.0.0.2' })).status).toBe(403);
}

const statusCount = (answers: Answer[], status: number): number => answers.filter((a) => a.status === status).length;

const cli = (args: string[]) => runKeysCliWith({ KEY_STORE: 'redis', REDIS_CLUSTER_NODES: cluster.seeds([cluster.nodes[5]!]), GATEWAY_CONFIG: stack.gatewayConfig }, args);

const seenByAll = (value: string, status: number, since: number): Promise<number> => seenByAllOf(urls, value, status, since);

describe('Redis Cluster, three instances seeded with different nodes', () => {
  it('counts per-minute limits exactly for keys on every master, under concurrency across instances', async () => {
    await awayFromMinuteEdge(15_000);
    const ids = await idsOnEveryMaster('minute');
    const values = await Promise.all(ids.map((id) => provision(id, { per_minute: 20 })));
    await warm(values);
    const answers = await Promise.all(values.flatMap((value) => Array.from({ length: 35 }, (_, i) => getWithKey(urls[i % 3]!, '/v1/ping', value))));
    for (let k = 0; k < ids.length; k++) {
      const mine = answers.slice(k * 35, (k + 1) * 35);
      const other = mine.filter((a) => a.status !== 200 && a.status !== 429).map((a) => `${a.status} ${a.text}`);
      expect({ id: ids[k], ok: statusCount(mine, 200), limited: statusCount(mine, 429), other }).toEqual({ id: ids[k], ok: 20, limited: 15, other: [] });
      for (const a of mine.filter((x) => x.status === 429)) expectError(a, 'rate_limited');
    }
    // The CLI reads the counters from the cluster: exactly the accepted requests, in both windows.
    for (const id of ids) {
      const shown = JSON.parse((await cli(['usage', id])).stdout) as { windows: Array<{ window: string; used: number }> };
      expect(shown.windows.find((w) => w.window === 'minute')!.used).toBe(20);
      expect(shown.windows.find((w) => w.window === 'day')!.used).toBe(20);
    }
  });

  it('counts daily quotas exactly for keys on every master', async () => {
    const ids = await idsOnEveryMaster('daily');
    const values = await Promise.all(ids.map((id) => provision(id, { per_minute: 1000, per_day: 12 })));
    await warm(values);
    const answers = await Promise.all(values.flatMap((value) => Array.from({ length: 20 }, (_, i) => getWithKey(urls[i % 3]!, '/v1/ping', value))));
    for (let k = 0; k < ids.length; k++) {
      const mine = answers.slice(k * 20, (k + 1) * 20);
      expect({ id: ids[k], ok: statusCount(mine, 200), quota: statusCount(mine, 429) }).toEqual({ id: ids[k], ok: 12, quota: 8 });
      for (const a of mine.filter((x) => x.status === 429)) expectError(a, 'quota_exceeded');
    }
  });

  it('a cursor issued by one instance is accepted by the others', async () => {
    const value = await provision('cursor-walker');
    let cursor: string | null = null;
    const seen = new Set<string>();
    for (let page = 0; page < 3; page++) {
      const a = await getWithKey(urls[page % 3]!, `/v1/properties?country=GB&limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, value);
      expect(a.status).toBe(200);
      for (const listing of a.body.data as Array<{ id: string }>) seen.add(listing.id);
      cursor = a.body.next_cursor as string | null;
      expect(cursor).toEqual(expect.any(String));
    }
    expect(seen.size).toBe(6);
  });

  it('keys CLI create, pause, settle and revoke, and an admin API roll, are seen by every instance within a second', async () => {
    const created = await cli(['create', '--id', 'cli-cluster', '--tier', 'standard', '--countries', 'GB', '--address', '127.0.0.1']);
    expect(created.code).toBe(0);
    const value = created.stdout.trim().split('\n').pop()!;
    const delays: number[] = [await seenByAll(value, 200, Date.now())];
    const step = async (args: string[], status: number): Promise<void> => {
      const r = await cli(args);
      expect({ args, code: r.code, stderr: r.stderr }).toEqual({ args, code: 0, stderr: '' });
      delays.push(await seenByAll(value, status, Date.now()));
    };
    await step(['pause', 'cli-cluster', '--reason', 'unpaid_renewal'], 403);
    await step(['settle', 'cli-cluster'], 200);
    // The admin API on the cluster: a roll without grace ends the old value everywhere, the new one works everywhere.
    const adminUrl = await readyAdminUrl(stack.gateways[0]!, ADMIN_TOKEN);
    const rolled = await adminCall(adminUrl, ADMIN_TOKEN, 'POST', '/admin/keys/cli-cluster/roll', { grace_seconds: 0 });
    expect(rolled.status).toBe(201);
    const { key: newValue } = rolled.body as { key: string };
    const rolledAt = Date.now();
    delays.push(await seenByAll(value, 401, rolledAt));
    await seenByAll(newValue, 200, rolledAt);
    const revoked = await cli(['revoke', 'cli-cluster']);
    expect(revoked.code).toBe(0);
    delays.push(await seenByAll(newValue, 401, Date.now()));
    console.log(`cluster: key change seen by all three instances after (ms, incl. the CLI's own exit): ${delays.join(', ')}`);
    // The contract's second, scaled by the load measured in this run (test/kit/timing.ts): 1 s on an idle machine.
    for (const d of delays) expect(d).toBeLessThan(budget(1000));
  });

  it('one cluster node given as REDIS_URL is refused at start-up with one line, never counted per instance', async () => {
    const result = await runToExit('gateway/main.js', gatewayEnv(writeKeysFile([]), writeGatewayConfig(), { REDIS_URL: `redis://${cluster.nodes[0]!.address}` }));
    expect(result.code).toBe(1);
    const lines = result.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/REDIS_URL: .* node of a Redis Cluster \(MOVED\)/);
  });

  it('a master killed: no 500 and no hang; counting is shared and exact again after the promotion', async () => {
    await awayFromMinuteEdge(20_000);
    const ops = await Promise.all(stack.gateways.map((g) => announcedUrl(g, 'ops listening')));
    const loadId = (await idsOnEveryMaster('load'))[0]!;
    const victim = await cluster.masterOf(await slotOf(loadId));
    const loadValue = await provision(loadId);
    // Fresh keys on the victim's slots, one per burst, known to every instance before the kill
    // (looked up from another address: 403 before the limit step, so nothing is counted yet).
    const LIMIT = 6;
    const burstIds = await idsOn(victim, 'burst', 14);
    const burstValues = await Promise.all(burstIds.map((id) => provision(id, { per_minute: LIMIT })));
    await warm(burstValues);
    await replicasCaughtUp(victim.port); // replication to the replicas is asynchronous

    await expectFailoverRecovers({
      label: 'cluster', urls, ops, loadValue, burstValues, limit: LIMIT,
      kill: () => victim.kill(),
      promoted: async () => cluster.waitForPromotion(await slotOf(loadId), victim),
    });
  });
});
