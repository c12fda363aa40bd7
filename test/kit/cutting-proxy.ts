/**
 * A TCP proxy in front of a Redis node that cuts the client's connection at a chosen command: before
 * the command reaches Redis, or after Redis ran it but before its answer reaches the client. One
 * cutter counts the commands over every proxy (a cluster's nodes), so "the n-th command of a change"
 * is the same wherever it goes. Used by the audit-exactly-once tests.
 */
import net, { type AddressInfo, type Socket } from 'node:net';
import Redis, { Cluster } from 'ioredis';
import pino from 'pino';
import { parseRedisTopology } from '../../gateway/config/redis-env';
import { backoff, connectRedis, nodeOptions, noResendOfWritten, whenReady, type RedisClient } from '../../gateway/redis/connect';
import { startRedis } from './redis-server';
import { startRedisCluster } from './redis-topologies';

export type CutMode = 'before' | 'after';

/** Counts the client's commands over every proxy; the armed one is cut (before it reaches Redis, or once Redis answered it). */
export interface Cutter {
  arm(step: number, mode: CutMode): void;
  disarm(): void;
  /** Whether the armed step was reached (and cut). */
  readonly fired: boolean;
}

export function createCutter(): Cutter & { onCommand(): { cut: CutMode | undefined } } {
  let count = 0;
  let armed: { step: number; mode: CutMode } | undefined;
  let fired = false;
  return {
    arm(step, mode) { count = 0; armed = { step, mode }; fired = false; },
    disarm() { armed = undefined; },
    get fired() { return fired; },
    onCommand() {
      count++;
      if (!armed || count !== armed.step) return { cut: undefined };
      fired = true;
      const { mode } = armed;
      armed = undefined;
      return { cut: mode };
    },
  };
}

/** Calls `onCommand` for each complete RESP command a client sends (arrays of bulk strings, as ioredis writes them); true when one asked to cut. */
function commandCounter(onCommand: () => boolean): (chunk: Buffer) => boolean {
  let buffered = Buffer.alloc(0);
  return (chunk) => {
    buffered = Buffer.concat([buffered, chunk]);
    let at = 0;
    let cut = false;
    for (;;) {
      const head = buffered.indexOf('\r\n', at);
      if (head < 0 || buffered[at] !== 0x2a) break;
      let next = head + 2;
      let complete = true;
      for (let i = Number(buffered.toString('latin1', at + 1, head)); i > 0 && complete; i--) {
        const sizeEnd = buffered.indexOf('\r\n', next);
        if (sizeEnd < 0) complete = false;
        else next = sizeEnd + 2 + Number(buffered.toString('latin1', next + 1, sizeEnd)) + 2;
        if (next > buffered.length) complete = false;
      }
      if (!complete) break;
      at = next;
      if (onCommand()) cut = true;
    }
    buffered = buffered.subarray(at);
    return cut;
  };
}

/** A proxy to `port` on 127.0.0.1 that cuts connections as `cutter` says. */
export async function cuttingProxy(port: number, cutter: ReturnType<typeof createCutter>): Promise<{ port: number; close(): void }> {
  const sockets = new Set<Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect({ host: '127.0.0.1', port });
    sockets.add(client).add(upstream);
    let mute = false;
    let mode: CutMode | undefined;
    const kill = (): void => { client.resetAndDestroy(); upstream.destroy(); };
    const count = commandCounter(() => (mode ??= cutter.onCommand().cut) !== undefined);
    client.on('data', (chunk: Buffer) => {
      if (mute) return;
      if (!count(chunk)) return void upstream.write(chunk);
      mute = true;
      // `before`: the armed command (and what came with it) never reaches Redis. `after`: it runs;
      // no answer comes back, and the connection is cut once Redis has answered.
      if (mode === 'before') return kill();
      upstream.write(chunk);
      setTimeout(kill, 100);
    });
    upstream.on('data', (chunk: Buffer) => { if (!mute) client.write(chunk); });
    for (const s of [client, upstream]) {
      s.on('error', () => kill());
      s.on('close', () => { kill(); sockets.delete(s); });
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { port: (server.address() as AddressInfo).port, close: () => { for (const s of sockets) s.destroy(); server.close(); } };
}

/** A Redis (one node or a cluster) reached through cutting proxies, by a client made as the gateway makes its own. */
export interface CutRedis<C extends RedisClient = RedisClient> {
  /** The gateway's client (connect.ts options; on a cluster, no re-send of written commands), through the proxies. */
  readonly client: C;
  /** A client straight to the node(s), for reading what happened. */
  readonly direct: C;
  stop(): Promise<void>;
}
export type CutCluster = CutRedis<Cluster>;

/** The clients and what stops them all: the clients, the proxies, then the servers. */
function cutRedis<C extends RedisClient>(client: C, direct: C, proxies: ReadonlyArray<{ close(): void }>, stopServers: () => Promise<void>): CutRedis<C> {
  return {
    client,
    direct,
    async stop() {
      client.disconnect();
      direct.disconnect();
      for (const p of proxies) p.close();
      await stopServers();
    },
  };
}

/** One redis-server behind a cutting proxy, reached by the admin listener's kind of client (no auto-pipelining). */
export async function startCutNode(cutter: ReturnType<typeof createCutter>, commandTimeoutMs: number): Promise<CutRedis> {
  const server = await startRedis();
  const proxy = await cuttingProxy(server.port, cutter);
  const direct = new Redis(server.url);
  const topology = parseRedisTopology({ REDIS_URL: `redis://127.0.0.1:${proxy.port}`, REDIS_COMMAND_TIMEOUT_MS: commandTimeoutMs })!;
  const client = connectRedis(topology, pino({ level: 'silent' }), 'admin', { autoPipelining: false });
  await whenReady(client, 10_000);
  return cutRedis(client, direct, [proxy], () => server.stop());
}

/** Starts a six-node cluster with a cutting proxy before each node (`natMap` sends the client through them). */
export async function startCutCluster(cutter: ReturnType<typeof createCutter>, commandTimeoutMs: number): Promise<CutCluster> {
  const cluster = await startRedisCluster();
  const proxies: Array<{ port: number; close(): void }> = [];
  const natMap: Record<string, { host: string; port: number }> = {};
  for (const node of cluster.nodes) {
    const proxy = await cuttingProxy(node.port, cutter);
    proxies.push(proxy);
    natMap[node.address] = { host: '127.0.0.1', port: proxy.port };
  }
  const topology = parseRedisTopology({ REDIS_CLUSTER_NODES: cluster.seeds(), REDIS_COMMAND_TIMEOUT_MS: commandTimeoutMs })!;
  const client = new Cluster(cluster.nodes.map((n) => ({ host: '127.0.0.1', port: natMap[n.address]!.port })), {
    redisOptions: nodeOptions(topology, commandTimeoutMs), enableOfflineQueue: false, enableAutoPipelining: false, clusterRetryStrategy: backoff,
    retryDelayOnFailover: 100, retryDelayOnClusterDown: 100, retryDelayOnTryAgain: 100, slotsRefreshTimeout: 2000, scaleReads: 'master', natMap,
  });
  noResendOfWritten(client);
  const direct = new Cluster(cluster.nodes.map((n) => ({ host: '127.0.0.1', port: n.port })));
  await whenReady(client, 20_000);
  await whenReady(direct, 20_000);
  return cutRedis(client, direct, proxies, () => cluster.stop());
}
