import { EventEmitter } from 'node:events';
import Redis, { type Cluster } from 'ioredis';
import type { Logger } from 'pino';
import type { HostPort, RedisTopology } from '../config/redis-env';
import { connectRedis, nodeOptions, type RedisClient } from './connect';
import type { RedisHealth } from './health';

/**
 * A pub/sub connection as the key store uses it: `ready` each time it (re)connects, so the caller
 * subscribes again and forgets what it may have missed; `close` when messages stop arriving.
 */
export interface Subscriber {
  on(event: 'message', listener: (channel: string, message: string) => void): unknown;
  on(event: 'ready' | 'close', listener: () => void): unknown;
  subscribe(channel: string): Promise<unknown>;
  quit(): Promise<unknown>;
  /** With `reconnect`: drop this connection and make a new one (which says `ready` again). */
  disconnect(reconnect?: boolean): void;
  /** The caller subscribes again on every `ready` itself. */
  readonly options: { autoResubscribe?: boolean };
}

/** Pause before trying the next cluster node after the subscribed one went away. */
const NEXT_NODE_DELAY_MS = 100;

/**
 * The subscriber for a topology. One Redis or Sentinel: a connection of its own (Sentinel leads it
 * to the current master after a failover, and it says `ready` again). Redis Cluster: PUBLISH reaches
 * every node, so one connection to any node hears every change; when that node goes away the next
 * known node is tried. ioredis' own cluster subscriber moves silently, so a caller could not know
 * that messages were lost in between: this one says `close` and `ready` like a plain connection.
 */
export function createSubscriber(topology: RedisTopology, commands: RedisClient, logger: Logger, health: RedisHealth): Subscriber {
  if (topology.kind !== 'cluster') return connectRedis(topology, logger, 'key-changes', { health, autoPipelining: false, resendUnanswered: true }) as Redis;
  return new ClusterSubscriber(topology.nodes, commands as Cluster, topology, logger, health);
}

class ClusterSubscriber extends EventEmitter implements Subscriber {
  /** Each node connection is new and subscribed by the caller on `ready`: nothing to resubscribe. */
  readonly options = { autoResubscribe: false };
  private current?: Redis;
  private next = 0;
  private stopped = false;
  private connected = false;

  constructor(
    private readonly seeds: readonly HostPort[],
    private readonly cluster: Cluster,
    private readonly topology: RedisTopology,
    private readonly logger: Logger,
    private readonly health: RedisHealth,
  ) {
    super();
    this.connect();
  }

  /** Every node the cluster client knows (masters and replicas), else the seeds. */
  private candidates(): HostPort[] {
    const known = this.cluster.nodes('all').map((n) => ({ host: n.options.host!, port: n.options.port! }));
    return known.length ? known : [...this.seeds];
  }

  private connect(): void {
    if (this.stopped) return;
    const list = this.candidates();
    const node = list[this.next++ % list.length]!;
    const client = new Redis({
      ...nodeOptions(this.topology, this.topology.commandTimeoutMs, true),
      host: node.host,
      port: node.port,
      retryStrategy: () => null, // a lost node is not waited for: the next one is tried
      reconnectOnError: () => false,
      autoResubscribe: false,
    });
    this.current = client;
    client.on('message', (channel: string, message: string) => this.emit('message', channel, message));
    client.on('error', (err: unknown) => this.health.report(err));
    client.on('ready', () => {
      if (!this.connected) this.logger.info({ redis: 'key-changes', node: `${node.host}:${node.port}` }, 'redis connected');
      this.connected = true;
      this.emit('ready');
    });
    client.once('end', () => {
      if (this.connected) this.logger.warn({ redis: 'key-changes', node: `${node.host}:${node.port}` }, 'redis connection lost');
      this.connected = false;
      this.emit('close');
      if (!this.stopped) setTimeout(() => this.connect(), NEXT_NODE_DELAY_MS).unref();
    });
  }

  subscribe(channel: string): Promise<unknown> {
    return this.current ? this.current.subscribe(channel) : Promise.reject(new Error('not connected'));
  }

  async quit(): Promise<unknown> {
    this.stopped = true;
    return this.current?.quit();
  }

  disconnect(reconnect = false): void {
    if (!reconnect) this.stopped = true;
    this.current?.disconnect(); // its 'end' moves on to the next node unless stopped
  }
}
