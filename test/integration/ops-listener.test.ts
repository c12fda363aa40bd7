/**
 * The ops listener: /healthz, /readyz naming each dependency's state, /metrics in Prometheus format
 * with the series operators scrape (per-key series only for the keys METRICS_KEY_IDS names); never
 * on the public port.
 */
import { stringify } from 'yaml';
import { fixtureListings } from '../fixtures/listings';
import {
  awayFromMinuteEdge, DEFAULT_TIERS, getWithKey, makeTempDir, randomKeyValue, removeTempDirs, send, startBackend, startGateway, writeKeysFile,
  writeListingsFile, writeTempFile, type Proc,
} from '../kit/gateway-stack';
import { announcedUrl } from '../kit/log-lines';

const value = randomKeyValue('ops');
const bulkValue = randomKeyValue('bulk');
let backend: Proc;
let gateway: Proc;
let opsUrl: string;


beforeAll(async () => {
  backend = await startBackend(writeListingsFile(fixtureListings()));
  const dir = makeTempDir();
  const keysFile = writeKeysFile(
    [
      { id: 'ops-key', value, tier: 'standard', countries: ['GB'], address: '127.0.0.1', status: 'active', limits: { per_minute: 5 } },
      { id: 'bulk-key', value: bulkValue, tier: 'standard', countries: ['GB'], address: '127.0.0.1', status: 'active' },
    ],
    dir,
  );
  const gatewayConfig = writeTempFile('gateway.yaml', stringify({ tiers: DEFAULT_TIERS }), dir);
  gateway = await startGateway({ backendUrl: backend.url, keysFile, gatewayConfig, env: { OPS_PORT: '0', METRICS_KEY_IDS: 'ops-key' } });
  opsUrl = await announcedUrl(gateway, 'ops listening');
  // Loopback unless OPS_HOST says otherwise.
  expect(gateway.output.find((l) => l.includes('"ops listening"'))).toContain('"host":"127.0.0.1"');
}, 30_000);

afterAll(async () => {
  await gateway?.stop();
  await backend?.stop();
  removeTempDirs();
});

it('answers /healthz and /readyz with every check ok', async () => {
  expect(await (await fetch(`${opsUrl}/healthz`)).json()).toEqual({ status: 'ok' });
  const ready = await fetch(`${opsUrl}/readyz`);
  expect(ready.status).toBe(200);
  expect(await ready.json()).toEqual({ ready: true, status: 'serving', checks: { keys: 'ok', data_services: { store_1: 'ok' } } });
});

it('is not on the public port, and the public surface is not on the ops port', async () => {
  for (const path of ['/metrics', '/healthz', '/readyz']) expect((await send(gateway.url, path)).status).toBe(404);
  expect((await fetch(`${opsUrl}/v1/ping`)).status).toBe(404);
});

it('exposes request, latency, per-key and limit series after traffic', async () => {
  await awayFromMinuteEdge(5000);
  for (let i = 0; i < 7; i++) await getWithKey(gateway.url, '/v1/ping', value); // 5 allowed, 2 rate_limited
  await send(gateway.url, '/nowhere');
  const text = await (await fetch(`${opsUrl}/metrics`)).text();
  expect(text).toMatch(/gateway_requests_total\{route="\/v1\/ping",status="200",code=""\} 5/);
  expect(text).toMatch(/gateway_requests_total\{route="\/v1\/ping",status="429",code="rate_limited"\} 2/);
  expect(text).toMatch(/gateway_requests_total\{route="unmatched",status="404",code="not_found"\} 4/); // 3 from the test before
  expect(text).toMatch(/gateway_request_duration_seconds_bucket\{le="0.005",route="\/v1\/ping"\} \d+/);
  expect(text).toMatch(/gateway_key_requests_total\{key_id="ops-key",status="200"\} 5/);
  // Only the listed keys get per-key series (bounded cardinality).
  await getWithKey(gateway.url, '/v1/ping', bulkValue);
  expect((await (await fetch(`${opsUrl}/metrics`)).text())).not.toContain('key_id="bulk-key"');
  expect(text).toMatch(/gateway_limit_decisions_total\{decision="allowed",store="local"\} 5/);
  expect(text).toMatch(/gateway_limit_decisions_total\{decision="rate_limited",store="local"\} 2/);
  expect(text).toContain('gateway_process_resident_memory_bytes');
  expect(text).not.toContain(value);
});

it('stays ready, naming the data service unavailable, when it is down, and counts the upstream errors', async () => {
  await backend.stop();
  const ready = await fetch(`${opsUrl}/readyz`);
  expect(ready.status).toBe(200);
  expect(await ready.json()).toEqual({ ready: true, status: 'serving', checks: { keys: 'ok', data_services: { store_1: 'unavailable' } } });
  const answer = await getWithKey(gateway.url, '/v1/properties?country=GB', bulkValue);
  expect(answer.status).toBe(503);
  const text = await (await fetch(`${opsUrl}/metrics`)).text();
  expect(text).toMatch(/gateway_upstream_errors_total\{kind="unreachable"\} [1-9]/);
  expect(text).toMatch(/gateway_requests_total\{route="\/v1\/properties",status="503",code="service_unavailable"\} 1/);
});
