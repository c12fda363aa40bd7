// gateway/redis/: Redis: connections (one server, Sentinel, Cluster; TLS), command deadlines, the start-up
// check, health, expected errors and refusals, the change subscriber.
import { defined } from '../defined';
import Redis, { Cluster, type RedisOptions as IoRedisOptions } from 'ioredis';
import type { Logger } from 'pino';
import type { RedisTopology } from '../config/redis-env';
import type { RedisHealth } from './health';
import { UNKNOWN_MASTER } from './refusal';

/** One Redis, a Sentinel-guarded master (both `Redis`), or a Redis Cluster: what the factory hands out. */
export type RedisClient = Redis | Cluster;

export interface RedisOptions {
  /** A command that gets no answer within this time fails (the caller falls back). Default: the topology's. */
  readonly commandTimeoutMs?: number;
  /** Batch concurrent commands into one write (hot path); off for the operator tools' connections. */
  readonly autoPipelining?: boolean;
  /** Told of every error, so refusals (credentials, ACL, TLS, MOVED) are seen as such. */
  readonly health?: RedisHealth;
  /**
   * Re-send, on the new connection, the commands left unanswered when one dropped. Off by default:
   * a write Redis ran whose answer was lost would run twice. On only where every command is
   * idempotent (the key-change subscription).
   */
  readonly resendUnanswered?: boolean;
}

/** Reconnection backoff: 100 ms more per attempt, at most a second. */
export const backoff = (attempt: number): number => Math.min(attempt * 100, 1000);

/** The options every data-node connection of every topology gets. */
export function nodeOptions(topology: RedisTopology, commandTimeoutMs: number, resendUnanswered = false): IoRedisOptions {
  return {
    commandTimeout: commandTimeoutMs,
    // A command written before the connection dropped and not answered is not written again on
    // the new connection: Redis may have run it already, and a counter consume, a refund, a usage
    // flush or a webhook enqueue run twice would charge, bill or notify twice. It fails instead
    // (its command timeout), and the caller does what it does when Redis is away.
    autoResendUnfulfilledCommands: resendUnanswered,
    maxRetriesPerRequest: 1,
    enableOfflineQueue: false,
    connectTimeout: 2000,
    retryStrategy: backoff,
    // A master demoted by a failover answers writes with READONLY: reconnect (Sentinel finds the new one).
    reconnectOnError: (err) => (err.message.startsWith('READONLY') ? 2 : false),
    ...defined({ username: topology.username, password: topology.password }),
    ...(topology.tls ? { tls: defined({ ca: topology.tls.ca }) } : {}),
  };
}

/**
 * The one place a Redis connection is made, for every topology the environment can choose
 * (docs/operating.md). Each client fails fast instead of piling up: no offline queue, one retry per
 * command, a command timeout, reconnection with a capped backoff. Connection changes are logged
 * once per change, never per request; every error goes to `health`, which tells a refusal from an
 * outage.
 */
export function connectRedis(topology: RedisTopology, logger: Logger, role: string, options: RedisOptions = {}): RedisClient {
  const node = nodeOptions(topology, options.commandTimeoutMs ?? topology.commandTimeoutMs, options.resendUnanswered);
  const autoPipelining = options.autoPipelining ?? true;
  let client: RedisClient;
  if (topology.kind === 'cluster') {
    client = new Cluster(
      topology.nodes.map((n) => ({ host: n.host, port: n.port })),
      {
        redisOptions: node,
        enableOfflineQueue: false,
        enableAutoPipelining: autoPipelining,
        clusterRetryStrategy: backoff,
        // A command refused unwritten ("Connection is closed.": its node was still connecting) is sent
        // again once the slots are refreshed; one written before its connection dropped is not
        // (noResendOfWritten, below).
        retryDelayOnFailover: 100,
        retryDelayOnClusterDown: 100,
        retryDelayOnTryAgain: 100,
        slotsRefreshTimeout: 2000,
        slotsRefreshInterval: 5000,
        scaleReads: 'master',
        // TLS certificates name the host the operator gave; do not resolve it to an address first.
        ...(topology.tls ? { dnsLookup: (address: string, callback: (err: null, address: string) => void) => callback(null, address) } : {}),
      },
    );
  } else if (topology.kind === 'sentinel') {
    client = new Redis({
      ...node,
      sentinels: topology.sentinels.map((s) => ({ host: s.host, port: s.port })),
      name: topology.masterName,
      sentinelRetryStrategy: backoff,
      // No failoverDetector: with the old master already dead, its switch message ended the client
      // for good in our failover test (ioredis 5.11). The reconnection loop below asks the sentinels
      // again at least every second, which finds the promoted master as soon as it is announced.
      enableAutoPipelining: autoPipelining,
      // With TLS asked for, the sentinels are spoken to over TLS as well: nothing goes in plaintext.
      ...(node.tls ? { enableTLSForSentinelMode: true, sentinelTLS: node.tls } : {}),
    });
  } else {
    client = new Redis(topology.url, { ...node, enableAutoPipelining: autoPipelining });
  }
  if (topology.kind === 'cluster' && !options.resendUnanswered) noResendOfWritten(client as Cluster);
  if (topology.kind === 'sentinel') watchUnknownMaster(client as Redis, topology.sentinels.length, options.health);
  let connected = false;
  client.on('ready', () => {
    options.health?.connected();
    if (!connected) logger.info({ redis: role }, 'redis connected');
    connected = true;
  });
  client.on('error', (err: unknown) => {
    // Outages repeat on every reconnect attempt and are logged by state below; refusals by health.
    options.health?.report(err);
  });
  client.on('close', () => {
    if (connected) logger.warn({ redis: role }, 'redis connection lost');
    connected = false;
  });
  return client;
}

/** What a command written to a cluster node whose connection then dropped fails with: it may have run. */
export const WRITTEN_THEN_CLOSED = 'Connection is closed after the command was written: it may have run, and is not sent again.';

/**
 * ioredis's Cluster client sends again, after a slot refresh, every command that failed with
 * "Connection is closed.": right for one refused before it was written (its node still
 * connecting), wrong for one the node may have run before the connection dropped: a consume, a
 * refund, a usage flush, a webhook enqueue would run twice (redis-cluster-no-resend.test.ts: a
 * request counted 2 for 1, usage 12 for 8). A node's connection fails its written commands
 * through `flushQueue` (no offline queue here, so nothing unwritten is in it): they get a message
 * of their own, which the cluster does not follow and callers still take for an outage.
 */
export function noResendOfWritten(cluster: Cluster): void {
  cluster.on('+node', (node: Redis) => {
    const inner = node as unknown as { flushQueue?: (error: Error, options?: unknown) => void };
    const flush = inner.flushQueue;
    if (typeof flush !== 'function') return;
    inner.flushQueue = function flushWritten(this: unknown, error: Error, options?: unknown): void {
      flush.call(this, error.message === 'Connection is closed.' ? new Error(WRITTEN_THEN_CLOSED) : error, options);
    };
  });
}

/**
 * A master name no sentinel knows is a configuration error, not an outage: when, in one round, every
 * sentinel answered and none knew the name (Redis 7: "ERR No such master with that name"; older: a
 * null reply; then ioredis' "All sentinels are unreachable"), `health` is told (a refusal).
 */
function watchUnknownMaster(client: Redis, sentinels: number, health: RedisHealth | undefined): void {
  let unknownInRound = 0;
  client.on('sentinelError', (err: Error) => {
    if (/No such master with that name|successfully, but got an invalid reply: null/.test(err.message)) unknownInRound++;
  });
  client.on('error', (err: Error) => {
    if (!/^All sentinels are unreachable/.test(err.message)) return;
    if (unknownInRound >= sentinels) health?.report(Object.assign(new Error('no sentinel knows the master name'), { code: UNKNOWN_MASTER }));
    unknownInRound = 0;
  });
}

/** Resolves when the client is ready or `timeoutMs` has passed (start-up does not wait forever). */
export function whenReady(client: RedisClient, timeoutMs: number): Promise<boolean> {
  if (client.status === 'ready') return Promise.resolve(true);
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      client.off('ready', onReady);
      resolve(false);
    }, timeoutMs);
    const onReady = (): void => {
      clearTimeout(timer);
      resolve(true);
    };
    client.once('ready', onReady);
  });
}
