/**
 * Sentinel over TLS (REDIS_SENTINELS with REDIS_TLS=1, REDIS_TLS_CA_FILE and REDIS_PASSWORD): a
 * TLS-only master with a password and a TLS-only sentinel watching it; the gateway finds the master
 * through the sentinel over TLS (nothing in plaintext) and counts there.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import {
  gatewayEnv, getWithKey, makeTempDir, randomKeyValue, removeTempDirs, writeGatewayConfig, writeKeysFile, type KeySpec,
} from '../kit/gateway-stack';
import { startProcess } from '../kit/processes';
import { freePort } from '../kit/redis-server';
import { makeCertificates, type Certificates } from '../kit/redis-topologies';

jest.setTimeout(90_000);

const run = promisify(execFile);
const PASSWORD = 'sentinel-tls-password-4c1d';
const MASTER = 'tlsmaster';
const key: KeySpec = { id: 'sentinel-tls', value: randomKeyValue('sentinel-tls'), tier: 'standard', countries: ['GB'], address: '127.0.0.1', status: 'active', limits: { per_minute: 2, per_day: 1000, per_month: 10000 } };

let dir: string;
let certificates: Certificates;
let masterPort: number;
let sentinelPort: number;
const children: ChildProcess[] = [];

const tlsArgs = (): string[] => ['--tls-cert-file', certificates.certFile, '--tls-key-file', certificates.keyFile, '--tls-ca-cert-file', certificates.caFile, '--tls-auth-clients', 'no'];
const cli = async (port: number, ...args: string[]): Promise<string> =>
  (await run('redis-cli', ['--tls', '--cacert', certificates.caFile, '-h', '127.0.0.1', '-p', String(port), ...args])).stdout;

async function until(check: () => Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check().catch(() => false))) {
    if (Date.now() > deadline) throw new Error('not ready');
    await new Promise((r) => setTimeout(r, 100));
  }
}

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'redis-sentinel-tls-'));
  certificates = await makeCertificates(dir);
  masterPort = await freePort();
  sentinelPort = await freePort();
  children.push(spawn('redis-server', ['--port', '0', '--tls-port', String(masterPort), '--bind', '127.0.0.1', '--protected-mode', 'no', '--save', '', '--appendonly', 'no', '--dir', dir, ...tlsArgs(), '--tls-replication', 'yes', '--requirepass', PASSWORD], { stdio: 'ignore' }));
  const conf = path.join(dir, 'sentinel.conf');
  fs.writeFileSync(conf, [
    'port 0', `tls-port ${sentinelPort}`, 'bind 127.0.0.1', 'protected-mode no', `dir ${dir}`,
    `tls-cert-file ${certificates.certFile}`, `tls-key-file ${certificates.keyFile}`, `tls-ca-cert-file ${certificates.caFile}`, 'tls-auth-clients no', 'tls-replication yes',
    `sentinel monitor ${MASTER} 127.0.0.1 ${masterPort} 1`, `sentinel auth-pass ${MASTER} ${PASSWORD}`,
  ].join('\n') + '\n');
  children.push(spawn('redis-server', [conf, '--sentinel'], { stdio: 'ignore' }));
  await until(async () => (await cli(sentinelPort, 'sentinel', 'get-master-addr-by-name', MASTER)).includes(String(masterPort)));
});

afterAll(async () => {
  for (const c of children) c.kill('SIGKILL');
  fs.rmSync(dir, { recursive: true, force: true });
  removeTempDirs();
});

it('the gateway finds the master through a TLS sentinel and counts there', async () => {
  const files = makeTempDir();
  const env = gatewayEnv(writeKeysFile([key], files), writeGatewayConfig(undefined, files), {
    REDIS_SENTINELS: `127.0.0.1:${sentinelPort}`, REDIS_SENTINEL_MASTER: MASTER, REDIS_TLS: '1', REDIS_TLS_CA_FILE: certificates.caFile, REDIS_PASSWORD: PASSWORD,
  });
  const gateway = await startProcess('gateway/main.js', env, 30_000);
  try {
    expect(gateway.output.find((l) => l.includes('"msg":"listening"'))).toContain('"counters":"redis sentinel"');
    expect(gateway.output.filter((l) => l.includes('not reachable') || l.includes('refuses'))).toEqual([]);
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++) statuses.push((await getWithKey(gateway.url, '/v1/ping', key.value)).status);
    expect(statuses).toEqual([200, 200, 429]);
    expect(await cli(masterPort, '--no-auth-warning', '-a', PASSWORD, '--scan', '--pattern', `lgw:{${key.id}}:minute:*`)).toContain(`lgw:{${key.id}}:minute:`);
    for (const line of gateway.output) expect(line).not.toContain(PASSWORD);
  } finally {
    await gateway.stop();
  }
});
