/**
 * Redis topologies that speak TLS only and require a password, for the TLS suites: a three-master
 * cluster (`--tls-cluster`), and a master watched by one sentinel (`--tls-replication`). Certificates
 * are made by `openssl` at test time (makeCertificates); clients need none. `stop()` kills
 * everything it started and removes its directory.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { freePort } from './redis-server';
import { launch, makeCertificates, tempDir, type Certificates, type RedisNode } from './redis-topologies';
import { eventually } from './timing';

const run = promisify(execFile);

export interface TlsTopology {
  readonly certificates: Certificates;
  readonly nodes: readonly RedisNode[];
  /** redis-cli over TLS (with the password) against one node; returns stdout. */
  cli(port: number, ...args: string[]): Promise<string>;
  stop(): Promise<void>;
}

const tlsArgs = (c: Certificates): string[] => [
  '--tls-cert-file', c.certFile, '--tls-key-file', c.keyFile, '--tls-ca-cert-file', c.caFile, '--tls-auth-clients', 'no', '--tls-replication', 'yes',
];
const tlsNodeArgs = (port: number, dir: string, c: Certificates): string[] => [
  '--port', '0', '--tls-port', String(port), '--bind', '127.0.0.1', '--protected-mode', 'no', '--save', '', '--appendonly', 'no', '--dir', dir, ...tlsArgs(c),
];

async function tlsTopology(label: string, password: string, start: (dir: string, c: Certificates, cli: TlsTopology['cli']) => Promise<RedisNode[]>): Promise<TlsTopology> {
  const dir = tempDir(label);
  const certificates = await makeCertificates(dir);
  const cli: TlsTopology['cli'] = async (port, ...args) =>
    (await run('redis-cli', ['--tls', '--cacert', certificates.caFile, '--no-auth-warning', '-a', password, '-h', '127.0.0.1', '-p', String(port), ...args])).stdout;
  const nodes: RedisNode[] = [];
  const stop = async (): Promise<void> => {
    for (const n of nodes) await n.kill();
    fs.rmSync(dir, { recursive: true, force: true });
  };
  try {
    nodes.push(...(await start(dir, certificates, cli)));
  } catch (err) {
    await stop();
    throw err;
  }
  return { certificates, nodes, cli, stop };
}

/** Three TLS-only masters with `password`, made one cluster (`redis-cli --cluster create`); resolves once every node says cluster_state:ok. */
export function startTlsCluster(password: string): Promise<TlsTopology> {
  return tlsTopology('cluster-tls', password, async (dir, c, cli) => {
    const nodes: RedisNode[] = [];
    for (let i = 0; i < 3; i++) {
      const port = await freePort();
      nodes.push(await launch([
        ...tlsNodeArgs(port, dir, c), '--tls-cluster', 'yes', '--requirepass', password, '--masterauth', password,
        '--cluster-enabled', 'yes', '--cluster-config-file', `nodes-${port}.conf`,
      ], port));
    }
    await run('redis-cli', ['--tls', '--cacert', c.caFile, '--no-auth-warning', '-a', password, '--cluster', 'create', ...nodes.map((n) => n.address), '--cluster-replicas', '0', '--cluster-yes']);
    await eventually('every node says cluster_state:ok', async () => (await Promise.all(nodes.map((n) => cli(n.port, 'cluster', 'info')))).every((info) => /cluster_state:ok/.test(info)), { timeoutMs: 30_000, intervalMs: 100, retryErrors: true });
    return nodes;
  });
}

/** A TLS-only master with `password` (nodes[0]) and a TLS-only sentinel watching it as `masterName` (nodes[1]); resolves once the sentinel names the master. */
export function startTlsSentinel(password: string, masterName: string): Promise<TlsTopology> {
  return tlsTopology('sentinel-tls', password, async (dir, c, cli) => {
    const masterPort = await freePort();
    const master = await launch([...tlsNodeArgs(masterPort, dir, c), '--requirepass', password], masterPort);
    const sentinelPort = await freePort();
    const conf = path.join(dir, 'sentinel.conf');
    fs.writeFileSync(conf, [
      'port 0', `tls-port ${sentinelPort}`, 'bind 127.0.0.1', 'protected-mode no', `dir ${dir}`,
      `tls-cert-file ${c.certFile}`, `tls-key-file ${c.keyFile}`, `tls-ca-cert-file ${c.caFile}`, 'tls-auth-clients no', 'tls-replication yes',
      `sentinel monitor ${masterName} 127.0.0.1 ${masterPort} 1`, `sentinel auth-pass ${masterName} ${password}`,
    ].join('\n') + '\n');
    const sentinel = await launch([conf, '--sentinel'], sentinelPort);
    await eventually('the sentinel names the master', async () => (await cli(sentinelPort, 'sentinel', 'get-master-addr-by-name', masterName)).includes(String(masterPort)), { timeoutMs: 30_000, intervalMs: 100, retryErrors: true });
    return [master, sentinel];
  });
}
