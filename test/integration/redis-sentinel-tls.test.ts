/**
 * Sentinel over TLS (REDIS_SENTINELS with REDIS_TLS=1, REDIS_TLS_CA_FILE and REDIS_PASSWORD): a
 * TLS-only master with a password and a TLS-only sentinel watching it; the gateway finds the master
 * through the sentinel over TLS (nothing in plaintext) and counts there.
 */
import {
  gatewayEnv, getWithKey, makeTempDir, randomKeyValue, removeTempDirs, writeGatewayConfig, writeKeysFile, type KeySpec,
} from '../kit/gateway-stack';
import { startProcess } from '../kit/processes';
import { startTlsSentinel, type TlsTopology } from '../kit/redis-tls-topologies';

jest.setTimeout(90_000);

const PASSWORD = 'sentinel-tls-password-4c1d';
const MASTER = 'tlsmaster';
const key: KeySpec = { id: 'sentinel-tls', value: randomKeyValue('sentinel-tls'), tier: 'standard', countries: ['GB'], address: '127.0.0.1', status: 'active', limits: { per_minute: 2, per_day: 1000, per_month: 10000 } };

let tls: TlsTopology;

beforeAll(async () => {
  tls = await startTlsSentinel(PASSWORD, MASTER);
});

afterAll(async () => {
  await tls?.stop();
  removeTempDirs();
});

it('the gateway finds the master through a TLS sentinel and counts there', async () => {
  const files = makeTempDir();
  const env = gatewayEnv(writeKeysFile([key], files), writeGatewayConfig(undefined, files), {
    REDIS_SENTINELS: tls.nodes[1]!.address, REDIS_SENTINEL_MASTER: MASTER, REDIS_TLS: '1', REDIS_TLS_CA_FILE: tls.certificates.caFile, REDIS_PASSWORD: PASSWORD,
  });
  const gateway = await startProcess('gateway/main.js', env, 30_000);
  try {
    expect(gateway.output.find((l) => l.includes('"msg":"listening"'))).toContain('"counters":"redis sentinel"');
    expect(gateway.output.filter((l) => l.includes('not reachable') || l.includes('refuses'))).toEqual([]);
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++) statuses.push((await getWithKey(gateway.url, '/v1/ping', key.value)).status);
    expect(statuses).toEqual([200, 200, 429]);
    expect(await tls.cli(tls.nodes[0]!.port, '--scan', '--pattern', `lgw:{${key.id}}:minute:*`)).toContain(`lgw:{${key.id}}:minute:`);
    for (const line of gateway.output) expect(line).not.toContain(PASSWORD);
  } finally {
    await gateway.stop();
  }
});
