/**
 * On a Redis Cluster, a write a node ran whose answer was lost with the connection is not sent
 * again: ioredis' cluster client, by default, refreshes the slots after a "Connection is closed."
 * and sends the command once more to whatever node then serves its slot. A request's counter
 * consume is counted once, a usage flush added once. Each node announces the port of a TCP proxy in
 * front of it (cluster-announce-port), so the gateway reaches every node through its proxy; the
 * proxy of the node owning the key's slot delays both ways, and the connection is reset after
 * Redis has run the write (seen directly on that node) and before its answer reached the gateway.
 */
import Redis from 'ioredis';
import {
  gatewayEnv, getWithKey, makeTempDir, randomKeyValue, removeTempDirs, UNLIMITED, writeGatewayConfig, writeKeysFile, type KeySpec,
} from '../kit/gateway-stack';
import { startProcess, type RunningProcess } from '../kit/processes';
import { countedInMinutes, usageToday } from '../kit/redis-keys';
import { redisCli, startRedisCluster, type RedisCluster } from '../kit/redis-topologies';
import { startTcpProxy, type TcpProxy } from '../kit/tcp-proxy';
import { eventually } from '../kit/timing';

jest.setTimeout(120_000);

/** Each way through the proxy takes this long while the cut is prepared. */
const DELAY_MS = 1500;

let cluster: RedisCluster;
/** Each node's proxy, by the node's own port. */
const proxies = new Map<number, TcpProxy>();
const gateways: RunningProcess[] = [];
const direct = new Map<number, Redis>();

beforeAll(async () => {
  cluster = await startRedisCluster();
  for (const node of cluster.nodes) {
    const proxy = await startTcpProxy(node.port, { resp: true });
    proxies.set(node.port, proxy);
    // The bus stays direct (its port is derived from the real one); clients are told the proxy's address.
    await redisCli(node.port, 'config', 'set', 'cluster-announce-ip', '127.0.0.1');
    await redisCli(node.port, 'config', 'set', 'cluster-announce-port', String(proxy.port));
  }
  const proxyPorts = new Set([...proxies.values()].map((p) => String(p.port)));
  await eventually('every node hands out the proxies only', async () => {
    for (const node of cluster.nodes) {
      const ports = (await redisCli(node.port, 'cluster', 'nodes')).trim().split('\n').map((l) => /:(\d+)@/.exec(l)?.[1] ?? '');
      if (ports.length !== 6 || !ports.every((p) => proxyPorts.has(p))) return false;
    }
    return true;
  }, { timeoutMs: 20_000, intervalMs: 100, retryErrors: true });
}, 60_000);

afterAll(async () => {
  for (const gateway of gateways) await gateway.stop();
  for (const client of direct.values()) client.disconnect();
  for (const proxy of proxies.values()) await proxy.close();
  await cluster?.stop();
  removeTempDirs();
});

/** The master serving the slot of `keyId`'s keys (their `{id}` hash tag): the node behind the proxy it announces. */
async function ownerOf(keyId: string): Promise<{ proxy: TcpProxy; redis: Redis }> {
  const slot = Number((await redisCli(cluster.nodes[0]!.port, 'cluster', 'keyslot', keyId)).trim());
  let announced = 0;
  for (const line of (await redisCli(cluster.nodes[0]!.port, 'cluster', 'nodes')).trim().split('\n')) {
    const fields = line.split(' ');
    if (!/master/.test(fields[2] ?? '')) continue;
    for (const range of fields.slice(8)) {
      const [a, b] = range.split('-').map(Number);
      if (slot >= a! && slot <= (b ?? a!)) announced = Number(/:(\d+)@/.exec(fields[1] ?? '')?.[1]);
    }
  }
  const node = cluster.nodes.find((n) => proxies.get(n.port)!.port === announced)!;
  if (!direct.has(node.port)) direct.set(node.port, new Redis(node.port, '127.0.0.1'));
  return { proxy: proxies.get(node.port)!, redis: direct.get(node.port)! };
}

/** A gateway with the keys file, its counters and usage in the cluster, every node reached through its proxy. */
async function gatewayOnCluster(key: KeySpec, extra: Record<string, string>): Promise<RunningProcess> {
  const dir = makeTempDir();
  const gateway = await startProcess('gateway/main.js', gatewayEnv(writeKeysFile([key], dir), writeGatewayConfig(undefined, dir), {
    REDIS_CLUSTER_NODES: [...proxies.values()].map((p) => p.address).join(','),
    // Longer than the cut takes: the write is not given up on before the connection drops.
    REDIS_COMMAND_TIMEOUT_MS: String(4 * DELAY_MS),
    ...extra,
  }), 30_000);
  gateways.push(gateway);
  return gateway;
}

/**
 * Delays the owner's proxy, runs `send`, waits until Redis has run the write (`applied` says so),
 * then resets the connection before the delayed answer is delivered, lets connections through
 * again, and gives a re-send (100 ms later, after a slot refresh, by default) time to happen.
 */
async function cutAfterApplied(proxy: TcpProxy, send: () => Promise<unknown>, applied: () => Promise<boolean>): Promise<void> {
  proxy.delay(DELAY_MS);
  const sent = send();
  await eventually('Redis has run the write', applied, { timeoutMs: 10 * DELAY_MS, intervalMs: 10 });
  proxy.reset();
  await new Promise((r) => setTimeout(r, 200));
  proxy.pass();
  await sent;
  await new Promise((r) => setTimeout(r, 2000));
}

it('a counter consume run by a cluster node whose answer is lost is not sent again: the request is counted once', async () => {
  const key: KeySpec = { id: 'cluster-resend-counter', value: randomKeyValue('cluster-resend-counter'), tier: 'standard', countries: ['GB'], address: '127.0.0.1', status: 'active', limits: UNLIMITED };
  const gateway = await gatewayOnCluster(key, { USAGE_HISTORY: 'off' });
  const { proxy, redis } = await ownerOf(key.id);
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
  // The next request finds the node again (a new connection, through a MOVED) and is counted in Redis.
  expect((await getWithKey(gateway.url, '/v1/ping', key.value)).status).toBe(200);
  expect(await minuteCount()).toBe(3);
});

it('a usage flush run by a cluster node whose answer is lost is not sent again: usage is added once', async () => {
  const key: KeySpec = { id: 'cluster-resend-usage', value: randomKeyValue('cluster-resend-usage'), tier: 'standard', countries: ['GB'], address: '127.0.0.1', status: 'active', limits: UNLIMITED };
  const gateway = await gatewayOnCluster(key, { USAGE_HISTORY: 'on', USAGE_FLUSH_MS: '500' });
  const { proxy, redis } = await ownerOf(key.id);
  const accepted = (): Promise<number> => usageToday(redis, key.id);
  for (let i = 0; i < 3; i++) expect((await getWithKey(gateway.url, '/v1/ping', key.value)).status).toBe(200);
  await eventually('3 requests in the usage history', async () => (await accepted()) === 3);
  // Five more requests, flushed together while the proxy is slow: the flush is cut after Redis ran it.
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
