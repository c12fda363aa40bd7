/**
 * Several listing stores: countries routed to their own data service (two real data services with
 * different LISTINGS_FILEs), a default, 503 not_configured for a country with no store; and the
 * insights area proxied to a configured upstream with the same policies.
 */
import fs from 'node:fs';
import { stringify } from 'yaml';
import {
  DEFAULT_TIERS, expectError, getWithKey, makeTempDir, randomKeyValue, removeTempDirs, startBackend, startGateway, startStub,
  writeKeysFile, writeListingsFile, writeTempFile, type Proc, type Stub,
} from '../kit/gateway-stack';

const listing = (country: string, id: string) => ({ id, country, listing_type: 'sale', property_type: 'house', price: 1 });
const advanced = randomKeyValue('adv');
const standard = randomKeyValue('std');
let gbStore: Proc;
let frStore: Proc;
let insightsStub: Stub;
let gateway: Proc;
let configFile: string;

beforeAll(async () => {
  gbStore = await startBackend(writeListingsFile([listing('GB', 'gb-store-1'), listing('GB', 'gb-store-2'), listing('DE', 'de-in-gb-store')]));
  frStore = await startBackend(writeListingsFile([listing('FR', 'fr-store-1')]));
  insightsStub = await startStub((req, res) => {
    res.setHeader('content-type', 'application/json');
    if (req.url?.startsWith('/missing')) {
      res.statusCode = 404;
      res.end('{"detail":"no such series at /internal/secret"}');
    } else if (req.url?.startsWith('/bad')) {
      res.statusCode = 400;
      res.end('{"parameter":"period"}');
    } else res.end(JSON.stringify({ series: 'median_price', path: req.url }));
  });
  const dir = makeTempDir();
  const keysFile = writeKeysFile(
    [
      { id: 'adv', value: advanced, tier: 'advanced', countries: ['GB', 'FR', 'DE', 'ES'], address: '127.0.0.1', status: 'active' },
      { id: 'std', value: standard, tier: 'standard', countries: ['GB'], address: '127.0.0.1', status: 'active' },
    ],
    dir,
  );
  configFile = writeTempFile(
    'gateway.yaml',
    stringify({ tiers: DEFAULT_TIERS, stores: { default: gbStore.url, countries: { FR: frStore.url } }, insights: { upstream: insightsStub.url } }),
    dir,
  );
  gateway = await startGateway({ backendUrl: 'http://127.0.0.1:9', keysFile, gatewayConfig: configFile });
}, 30_000);

afterAll(async () => {
  await gateway?.stop();
  await Promise.all([gbStore?.stop(), frStore?.stop(), insightsStub?.close()]);
  removeTempDirs();
});

describe('several listing stores', () => {
  it('routes each country to its store, others to the default', async () => {
    const gb = await getWithKey(gateway.url, '/v1/properties?country=GB', advanced);
    expect(gb.body.data.map((l: { id: string }) => l.id)).toEqual(['gb-store-1', 'gb-store-2']);
    const fr = await getWithKey(gateway.url, '/v1/properties?country=FR', advanced);
    expect(fr.body.data.map((l: { id: string }) => l.id)).toEqual(['fr-store-1']);
    expect((await getWithKey(gateway.url, '/v1/properties/fr-store-1?country=FR', advanced)).status).toBe(200);
    expect((await getWithKey(gateway.url, '/v1/properties/de-in-gb-store?country=DE', advanced)).status).toBe(200);
  });

  it('answers 503 not_configured, with Retry-After, for a country without a store once there is no default', async () => {
    const text = fs.readFileSync(configFile, 'utf8');
    fs.writeFileSync(configFile, stringify({ tiers: DEFAULT_TIERS, stores: { countries: { FR: frStore.url, GB: gbStore.url } } }));
    gateway.child.kill('SIGHUP');
    const deadline = Date.now() + 3000;
    let answer = await getWithKey(gateway.url, '/v1/properties?country=ES', advanced);
    while (answer.status !== 503 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 25));
      answer = await getWithKey(gateway.url, '/v1/properties?country=ES', advanced);
    }
    expectError(answer, 'not_configured');
    expect(Number(answer.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expectError(await getWithKey(gateway.url, '/v1/properties/x?country=DE', advanced), 'not_configured');
    expect((await getWithKey(gateway.url, '/v1/properties?country=FR', advanced)).status).toBe(200);
    fs.writeFileSync(configFile, text);
    gateway.child.kill('SIGHUP');
    const restored = Date.now() + 3000;
    while ((await getWithKey(gateway.url, '/v1/properties?country=ES', advanced)).status !== 200 && Date.now() < restored) {
      await new Promise((r) => setTimeout(r, 25));
    }
  });
});

describe('insights upstream', () => {
  it('proxies Advanced keys, with path and query, never the key', async () => {
    const before = insightsStub.requests.length;
    const answer = await getWithKey(gateway.url, '/v1/insights/market/GB?period=2026-10', advanced);
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({ series: 'median_price', path: '/market/GB?period=2026-10' });
    const seen = insightsStub.requests.slice(before);
    expect(seen).toHaveLength(1);
    expect(seen[0]!.headers['x-api-key']).toBeUndefined();
    expect(JSON.stringify(seen[0]!.rawHeaders)).not.toContain(advanced);
  });

  it('keeps the same policies: Standard keys get upgrade_required and never reach the upstream', async () => {
    const before = insightsStub.requests.length;
    expectError(await getWithKey(gateway.url, '/v1/insights/market/GB', standard), 'upgrade_required');
    expectError(await getWithKey(gateway.url, '/v1/insights', randomKeyValue('unknown')), 'unauthenticated');
    expect(insightsStub.requests.length).toBe(before);
  });

  it('maps the upstream 404 and 400 without leaking their bodies', async () => {
    const missing = await getWithKey(gateway.url, '/v1/insights/missing', advanced);
    expectError(missing, 'not_found');
    expect(missing.text).not.toContain('internal');
    const refused = await getWithKey(gateway.url, '/v1/insights/bad', advanced);
    expectError(refused, 'invalid_parameter', { parameter: 'query' });
    expect(refused.text).not.toContain('period');
  });
});
