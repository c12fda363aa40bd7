/**
 * Real Redis topologies for the scale-out suites, on free loopback ports, each in a temp directory:
 * a Redis Cluster (3 masters + 3 replicas, made by `redis-cli --cluster create`), a Sentinel set
 * (master, replica, three sentinels), a password / ACL server, and a TLS server with a CA and a
 * certificate made by `openssl` at test time. Short timeouts (cluster-node-timeout,
 * down-after-milliseconds) keep failovers within seconds. `stop()` kills everything it started.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { freePort } from './redis-server';
import { eventually } from './timing';

const run = promisify(execFile);

export interface RedisNode {
  port: number;
  /** `127.0.0.1:port` */
  address: string;
  /** SIGKILL, as a crash. */
  kill(): Promise<void>;
  readonly alive: boolean;
}

export const tempDir = (label: string): string => fs.mkdtempSync(path.join(os.tmpdir(), `redis-${label}-`));

/** Resolves once something accepts TCP connections on `port` (works for TLS ports too). */
function waitForListen(port: number, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  return new Promise((resolve, reject) => {
    const attempt = (): void => {
      const socket = net.connect(port, '127.0.0.1');
      socket.once('connect', () => {
        socket.destroy();
        resolve();
      });
      socket.once('error', () => {
        socket.destroy();
        if (Date.now() > deadline) reject(new Error(`nothing listens on ${port}`));
        else setTimeout(attempt, 25);
      });
    };
    attempt();
  });
}

/** Starts `redis-server` with `args` (a config file path first, or flags) and waits for `port`. */
export async function launch(args: string[], port: number): Promise<RedisNode> {
  const child: ChildProcess = spawn('redis-server', args, { stdio: 'ignore' });
  let alive = true;
  const exited = new Promise<void>((resolve) => child.once('exit', () => { alive = false; resolve(); }));
  await waitForListen(port);
  return {
    port,
    address: `127.0.0.1:${port}`,
    get alive() { return alive; },
    kill: async () => {
      if (alive) child.kill('SIGKILL');
      await exited;
    },
  };
}

const baseArgs = (port: number, dir: string): string[] => [
  '--port', String(port), '--bind', '127.0.0.1', '--protected-mode', 'no', '--save', '', '--appendonly', 'no', '--dir', dir,
];

/** redis-cli against one node; returns stdout. */
export async function redisCli(port: number, ...args: string[]): Promise<string> {
  const { stdout } = await run('redis-cli', ['-h', '127.0.0.1', '-p', String(port), ...args]);
  return stdout;
}

// ---------------------------------------------------------------------------------------------
// Redis Cluster

/**
 * Resolves once every replica of the master on `masterPort` holds what the master has written so
 * far (replication is asynchronous): each replica's own offset reaches the master's offset read now.
 */
export async function replicasCaughtUp(masterPort: number): Promise<void> {
  const info = await redisCli(masterPort, 'info', 'replication');
  const written = Number(/master_repl_offset:(\d+)/.exec(info)?.[1]);
  const replicas = [...info.matchAll(/^slave\d+:ip=[^,]+,port=(\d+)/gm)].map((m) => Number(m[1]));
  for (const port of replicas) {
    await eventually(`the replica on ${port} caught up`, async () => Number(/slave_repl_offset:(\d+)/.exec(await redisCli(port, 'info', 'replication'))?.[1] ?? -1) >= written);
  }
}

export interface RedisCluster {
  nodes: RedisNode[];
  /** `host:port,…` of every node, for REDIS_CLUSTER_NODES. */
  seeds(nodes?: RedisNode[]): string;
  /** The node serving `slot` as master now (asked of a live node). */
  masterOf(slot: number): Promise<RedisNode>;
  /** Resolves once every live node sees the cluster ok and `slot` is served by a master other than `not`. */
  waitForPromotion(slot: number, not: RedisNode, timeoutMs?: number): Promise<RedisNode>;
  stop(): Promise<void>;
}

/** Six nodes, three masters with one replica each, `cluster-node-timeout` short so a failover takes seconds. */
export async function startRedisCluster(options: { nodeTimeoutMs?: number } = {}): Promise<RedisCluster> {
  const dir = tempDir('cluster');
  const nodes: RedisNode[] = [];
  try {
    for (let i = 0; i < 6; i++) {
      const port = await freePort();
      nodes.push(await launch([
        ...baseArgs(port, dir),
        '--cluster-enabled', 'yes',
        '--cluster-config-file', `nodes-${port}.conf`,
        '--cluster-node-timeout', String(options.nodeTimeoutMs ?? 1000),
        // A replica may be promoted however long its link was down (the test kills masters on purpose).
        '--cluster-replica-validity-factor', '0',
      ], port));
    }
    await run('redis-cli', ['--cluster', 'create', ...nodes.map((n) => n.address), '--cluster-replicas', '1', '--cluster-yes']);
    await eventually('cluster ok on every node', async () => {
      for (const n of nodes) if (!/cluster_state:ok/.test(await redisCli(n.port, 'cluster', 'info'))) return false;
      // Every node knows the replicas (so a failover can happen) and agrees on 3 masters.
      const lines = (await redisCli(nodes[0]!.port, 'cluster', 'nodes')).trim().split('\n');
      return lines.filter((l) => / master /.test(l) || /,master /.test(l)).length === 3 && lines.filter((l) => /slave/.test(l)).length === 3;
    }, { timeoutMs: 20_000, intervalMs: 100, retryErrors: true });
  } catch (err) {
    await Promise.all(nodes.map((n) => n.kill()));
    throw err;
  }

  const live = (): RedisNode => nodes.find((n) => n.alive)!;
  const masterOf = async (slot: number): Promise<RedisNode> => {
    const text = await redisCli(live().port, 'cluster', 'nodes');
    for (const line of text.trim().split('\n')) {
      const fields = line.split(' ');
      if (!/master/.test(fields[2] ?? '') || /fail/.test(fields[2] ?? '')) continue;
      const port = Number(/:(\d+)@/.exec(fields[1] ?? '')?.[1]);
      for (const range of fields.slice(8)) {
        const [a, b] = range.split('-').map(Number);
        if (slot >= a! && slot <= (b ?? a!)) return nodes.find((n) => n.port === port)!;
      }
    }
    throw new Error(`no master serves slot ${slot}`);
  };
  return {
    nodes,
    seeds: (list = nodes) => list.map((n) => n.address).join(','),
    masterOf,
    async waitForPromotion(slot, not, timeoutMs = 30_000) {
      let promoted: RedisNode | undefined;
      await eventually(`a new master for slot ${slot}`, async () => {
        const m = await masterOf(slot);
        if (m === not || !m.alive) return false;
        if (!/cluster_state:ok/.test(await redisCli(m.port, 'cluster', 'info'))) return false;
        promoted = m;
        return true;
      }, { timeoutMs: timeoutMs, intervalMs: 100, retryErrors: true });
      return promoted!;
    },
    async stop() {
      await Promise.all(nodes.map((n) => n.kill()));
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Sentinel

export interface SentinelSet {
  master: RedisNode;
  replica: RedisNode;
  sentinels: RedisNode[];
  masterName: string;
  /** `host:port,…` of the sentinels, for REDIS_SENTINELS. */
  sentinelList: string;
  /** The master's port as the sentinels report it now. */
  currentMasterPort(): Promise<number>;
  stop(): Promise<void>;
}

/**
 * A master, its replica and three sentinels (quorum 2) with a short down-after-milliseconds.
 * With `password`, the data nodes require it (the sentinels themselves do not).
 */
export async function startSentinelSet(options: { downAfterMs?: number; password?: string } = {}): Promise<SentinelSet> {
  const dir = tempDir('sentinel');
  const masterName = 'gwmaster';
  const started: RedisNode[] = [];
  try {
    const auth = options.password === undefined ? [] : ['--requirepass', options.password, '--masterauth', options.password];
    const cliAuth = options.password === undefined ? [] : ['--no-auth-warning', '-a', options.password];
    const masterPort = await freePort();
    const master = await launch([...baseArgs(masterPort, dir), ...auth], masterPort);
    started.push(master);
    const replicaPort = await freePort();
    const replica = await launch([...baseArgs(replicaPort, dir), ...auth, '--replicaof', '127.0.0.1', String(masterPort)], replicaPort);
    started.push(replica);
    await eventually('replica in sync', async () => /master_link_status:up/.test(await redisCli(replicaPort, ...cliAuth, 'info', 'replication')), { timeoutMs: 15_000, intervalMs: 100, retryErrors: true });
    const sentinels: RedisNode[] = [];
    for (let i = 0; i < 3; i++) {
      const port = await freePort();
      const conf = path.join(dir, `sentinel-${port}.conf`);
      fs.writeFileSync(conf, [
        `port ${port}`,
        'bind 127.0.0.1',
        'protected-mode no',
        `dir ${dir}`,
        `sentinel monitor ${masterName} 127.0.0.1 ${masterPort} 2`,
        ...(options.password === undefined ? [] : [`sentinel auth-pass ${masterName} ${options.password}`]),
        `sentinel down-after-milliseconds ${masterName} ${options.downAfterMs ?? 1000}`,
        `sentinel failover-timeout ${masterName} 10000`,
        `sentinel parallel-syncs ${masterName} 1`,
        '',
      ].join('\n'));
      const node = await launch([conf, '--sentinel'], port);
      sentinels.push(node);
      started.push(node);
    }
    // Every sentinel has found the replica and the other sentinels (a failover needs both).
    await eventually('sentinels see the replica and each other', async () => {
      for (const s of sentinels) {
        const info = await redisCli(s.port, 'sentinel', 'master', masterName);
        const field = (name: string): number => Number(new RegExp(`${name}\\n(\\d+)`).exec(info)?.[1] ?? 0);
        if (field('num-slaves') < 1 || field('num-other-sentinels') < 2) return false;
      }
      return true;
    }, { timeoutMs: 20_000, intervalMs: 100, retryErrors: true });
    return {
      master,
      replica,
      sentinels,
      masterName,
      sentinelList: sentinels.map((s) => s.address).join(','),
      async currentMasterPort() {
        const live = sentinels.find((s) => s.alive)!;
        const out = (await redisCli(live.port, 'sentinel', 'get-master-addr-by-name', masterName)).trim().split('\n');
        return Number(out[1]);
      },
      async stop() {
        await Promise.all(started.map((n) => n.kill()));
        fs.rmSync(dir, { recursive: true, force: true });
      },
    };
  } catch (err) {
    await Promise.all(started.map((n) => n.kill()));
    throw err;
  }
}

// ---------------------------------------------------------------------------------------------
// Credentials and TLS

export interface SecuredRedis {
  node: RedisNode;
  dir: string;
  stop(): Promise<void>;
}

/** A Redis with `requirepass` and ACL users given as `ACL SETUSER` rule lists (e.g. `['gw', 'on', '>pw', '~*', '+@all']`). */
export async function startPasswordRedis(password: string, users: string[][] = []): Promise<SecuredRedis> {
  const dir = tempDir('auth');
  const port = await freePort();
  const node = await launch([...baseArgs(port, dir), '--requirepass', password], port);
  for (const rules of users) await redisCli(port, '--no-auth-warning', '-a', password, 'acl', 'setuser', ...rules);
  return { node, dir, stop: async () => { await node.kill(); fs.rmSync(dir, { recursive: true, force: true }); } };
}

export interface Certificates {
  /** The CA that signed the server certificate. */
  caFile: string;
  /** Another CA, which signed nothing this server shows. */
  otherCaFile: string;
  certFile: string;
  keyFile: string;
}

/** A CA and a server certificate for 127.0.0.1 / localhost signed by it, and an unrelated CA. */
export async function makeCertificates(dir: string): Promise<Certificates> {
  const file = (name: string): string => path.join(dir, name);
  const openssl = (...args: string[]): Promise<unknown> => run('openssl', args);
  await openssl('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', file('ca.key'), '-out', file('ca.pem'), '-days', '2', '-subj', '/CN=gateway test CA');
  await openssl('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', file('other.key'), '-out', file('other.pem'), '-days', '2', '-subj', '/CN=some other CA');
  await openssl('req', '-newkey', 'rsa:2048', '-nodes', '-keyout', file('server.key'), '-out', file('server.csr'), '-subj', '/CN=localhost');
  fs.writeFileSync(file('ext.cnf'), 'subjectAltName=IP:127.0.0.1,DNS:localhost\n');
  await openssl('x509', '-req', '-in', file('server.csr'), '-CA', file('ca.pem'), '-CAkey', file('ca.key'), '-CAcreateserial', '-out', file('server.pem'), '-days', '2', '-extfile', file('ext.cnf'));
  return { caFile: file('ca.pem'), otherCaFile: file('other.pem'), certFile: file('server.pem'), keyFile: file('server.key') };
}

/** A Redis speaking TLS only (`--port 0 --tls-port P`), with a password; clients need no certificate. */
export async function startTlsRedis(password: string): Promise<SecuredRedis & { certificates: Certificates }> {
  const dir = tempDir('tls');
  const certificates = await makeCertificates(dir);
  const port = await freePort();
  const node = await launch([
    ...baseArgs(port, dir).filter((a, i, all) => a !== '--port' && all[i - 1] !== '--port'),
    '--port', '0', '--tls-port', String(port),
    '--tls-cert-file', certificates.certFile, '--tls-key-file', certificates.keyFile, '--tls-ca-cert-file', certificates.caFile,
    '--tls-auth-clients', 'no', '--requirepass', password,
  ], port);
  return { node, dir, certificates, stop: async () => { await node.kill(); fs.rmSync(dir, { recursive: true, force: true }); } };
}
