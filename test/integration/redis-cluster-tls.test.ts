/**
 * A Redis Cluster that speaks TLS only and requires a password (REDIS_CLUSTER_NODES with REDIS_TLS=1,
 * REDIS_TLS_CA_FILE and REDIS_PASSWORD): the gateway starts, counts in the cluster, and a wrong or
 * missing password is refused at start-up with one line naming the variable, never the password.
 * (Not yet: a cluster whose certificate is not trusted is taken for a Redis away, not refused:
 * ioredis reports its nodes' TLS failures as "Connection is closed".)
 */
import {
  gatewayEnv, getWithKey, makeTempDir, randomKeyValue, removeTempDirs, runToExit, writeGatewayConfig, writeKeysFile, type KeySpec,
} from '../kit/gateway-stack';
import { startProcess } from '../kit/processes';
import { startTlsCluster, type TlsTopology } from '../kit/redis-tls-topologies';

jest.setTimeout(120_000);

const PASSWORD = 'cluster-tls-password-7f3e9a';
const WRONG = 'not-the-cluster-password-1';
const key: KeySpec = { id: 'cluster-tls', value: randomKeyValue('cluster-tls'), tier: 'standard', countries: ['GB'], address: '127.0.0.1', status: 'active', limits: { per_minute: 2, per_day: 1000, per_month: 10000 } };

let tls: TlsTopology;

beforeAll(async () => {
  tls = await startTlsCluster(PASSWORD);
});

afterAll(async () => {
  await tls?.stop();
  removeTempDirs();
});

const env = (extra: Record<string, string>): Record<string, string> => {
  const files = makeTempDir();
  return gatewayEnv(writeKeysFile([key], files), writeGatewayConfig(undefined, files), {
    REDIS_CLUSTER_NODES: tls.nodes.map((n) => n.address).join(','),
    REDIS_TLS: '1',
    ...extra,
  });
};

it('TLS and a password: the gateway starts on the cluster and counts there', async () => {
  const gateway = await startProcess('gateway/main.js', env({ REDIS_TLS_CA_FILE: tls.certificates.caFile, REDIS_PASSWORD: PASSWORD }), 30_000);
  try {
    expect(gateway.output.find((l) => l.includes('"msg":"listening"'))).toContain('"counters":"redis cluster"');
    expect(gateway.output.filter((l) => l.includes('not reachable') || l.includes('refuses'))).toEqual([]);
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++) statuses.push((await getWithKey(gateway.url, '/v1/ping', key.value)).status);
    expect(statuses).toEqual([200, 200, 429]);
    // The counters are in the cluster, under the key's hash tag.
    const slot = Number((await tls.cli(tls.nodes[0]!.port, 'cluster', 'keyslot', `{${key.id}}`)).trim());
    const owners = await Promise.all(tls.nodes.map(async (n) => ({ n, keys: (await tls.cli(n.port, 'cluster', 'getkeysinslot', String(slot), '10')).trim() })));
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
  const result = await runToExit('gateway/main.js', env({ ...extra, REDIS_TLS_CA_FILE: tls.certificates.caFile }), 30_000);
  expect(result.code).toBe(1);
  const lines = result.stderr.trim().split('\n');
  expect(lines).toHaveLength(1);
  expect(lines[0]).toContain(variable);
  expect(lines[0]).toMatch(reason);
  expect(`${result.stdout}${result.stderr}`).not.toContain(PASSWORD);
  expect(`${result.stdout}${result.stderr}`).not.toContain(WRONG);
});
