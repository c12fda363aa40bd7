/**
 * A Redis Cluster that speaks TLS only and requires a password (REDIS_CLUSTER_NODES with REDIS_TLS=1,
 * REDIS_TLS_CA_FILE and REDIS_PASSWORD): the gateway starts, counts in the cluster, and a wrong or
 * missing password is refused at start-up with one line naming the variable, never the password.
 * (Not yet: a cluster whose certificate is not trusted is taken for a Redis away, not refused:
 * ioredis reports its nodes' TLS failures as "Connection is closed".)
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import {
  gatewayEnv, getWithKey, makeTempDir, randomKeyValue, removeTempDirs, runToExit, writeGatewayConfig, writeKeysFile, type KeySpec,
} from '../kit/gateway-stack';
import { startProcess } from '../kit/processes';
import { freePort } from '../kit/redis-server';
import { makeCertificates, type Certificates } from '../kit/redis-topologies';

jest.setTimeout(120_000);

const run = promisify(execFile);
const PASSWORD = 'cluster-tls-password-7f3e9a';
const WRONG = 'not-the-cluster-password-1';
const key: KeySpec = { id: 'cluster-tls', value: randomKeyValue('cluster-tls'), tier: 'standard', countries: ['GB'], address: '127.0.0.1', status: 'active', limits: { per_minute: 2, per_day: 1000, per_month: 10000 } };

let dir: string;
let certificates: Certificates;
const nodes: Array<{ port: number; child: ChildProcess }> = [];

/** redis-cli over TLS with the password. */
const cli = async (port: number, ...args: string[]): Promise<string> =>
  (await run('redis-cli', ['--tls', '--cacert', certificates.caFile, '--no-auth-warning', '-a', PASSWORD, '-h', '127.0.0.1', '-p', String(port), ...args])).stdout;

async function until(check: () => Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check().catch(() => false))) {
    if (Date.now() > deadline) throw new Error('cluster not ready');
    await new Promise((r) => setTimeout(r, 100));
  }
}

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'redis-cluster-tls-'));
  certificates = await makeCertificates(dir);
  for (let i = 0; i < 3; i++) {
    const port = await freePort();
    const child = spawn('redis-server', [
      '--port', '0', '--tls-port', String(port), '--bind', '127.0.0.1', '--protected-mode', 'no', '--save', '', '--appendonly', 'no', '--dir', dir,
      '--tls-cert-file', certificates.certFile, '--tls-key-file', certificates.keyFile, '--tls-ca-cert-file', certificates.caFile,
      '--tls-auth-clients', 'no', '--tls-cluster', 'yes', '--tls-replication', 'yes',
      '--requirepass', PASSWORD, '--masterauth', PASSWORD,
      '--cluster-enabled', 'yes', '--cluster-config-file', `nodes-${port}.conf`,
    ], { stdio: 'ignore' });
    nodes.push({ port, child });
  }
  await until(async () => (await Promise.all(nodes.map((n) => cli(n.port, 'ping')))).every((p) => p.trim() === 'PONG'));
  await run('redis-cli', ['--tls', '--cacert', certificates.caFile, '--no-auth-warning', '-a', PASSWORD, '--cluster', 'create', ...nodes.map((n) => `127.0.0.1:${n.port}`), '--cluster-replicas', '0', '--cluster-yes']);
  await until(async () => (await Promise.all(nodes.map((n) => cli(n.port, 'cluster', 'info')))).every((info) => /cluster_state:ok/.test(info)));
});

afterAll(async () => {
  for (const n of nodes) n.child.kill('SIGKILL');
  fs.rmSync(dir, { recursive: true, force: true });
  removeTempDirs();
});

const env = (extra: Record<string, string>): Record<string, string> => {
  const files = makeTempDir();
  return gatewayEnv(writeKeysFile([key], files), writeGatewayConfig(undefined, files), {
    REDIS_CLUSTER_NODES: nodes.map((n) => `127.0.0.1:${n.port}`).join(','),
    REDIS_TLS: '1',
    ...extra,
  });
};

it('TLS and a password: the gateway starts on the cluster and counts there', async () => {
  const gateway = await startProcess('gateway/main.js', env({ REDIS_TLS_CA_FILE: certificates.caFile, REDIS_PASSWORD: PASSWORD }), 30_000);
  try {
    expect(gateway.output.find((l) => l.includes('"msg":"listening"'))).toContain('"counters":"redis cluster"');
    expect(gateway.output.filter((l) => l.includes('not reachable') || l.includes('refuses'))).toEqual([]);
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++) statuses.push((await getWithKey(gateway.url, '/v1/ping', key.value)).status);
    expect(statuses).toEqual([200, 200, 429]);
    // The counters are in the cluster, under the key's hash tag.
    const slot = Number((await cli(nodes[0]!.port, 'cluster', 'keyslot', `{${key.id}}`)).trim());
    const owners = await Promise.all(nodes.map(async (n) => ({ n, keys: (await cli(n.port, 'cluster', 'getkeysinslot', String(slot), '10')).trim() })));
    expect(owners.map((o) => o.keys).join('\n')).toContain(`lgw:{${key.id}}:minute:`);
    for (const line of gateway.output) expect(line).not.toContain(PASSWORD);
  } finally {
    await gateway.stop();
  }
});

it.each([
  ['a wrong password', { REDIS_TLS_CA_FILE: 'ca', REDIS_PASSWORD: WRONG }, 'REDIS_PASSWORD', /WRONGPASS/],
  ['no password', { REDIS_TLS_CA_FILE: 'ca' }, 'REDIS_PASSWORD', /NOAUTH/],
])('%s: refused at start-up with one line naming the variable', async (_label, extra, variable, reason) => {
  const result = await runToExit('gateway/main.js', env({ ...extra, REDIS_TLS_CA_FILE: certificates.caFile }), 30_000);
  expect(result.code).toBe(1);
  const lines = result.stderr.trim().split('\n');
  expect(lines).toHaveLength(1);
  expect(lines[0]).toContain(variable);
  expect(lines[0]).toMatch(reason);
  expect(`${result.stdout}${result.stderr}`).not.toContain(PASSWORD);
  expect(`${result.stdout}${result.stderr}`).not.toContain(WRONG);
});
