/**
 * Every example of openapi/openapi.yaml requested live, against the demo set-up `npm start` runs
 * (the data service's generated listings, the demo keys of config/demo-keys.yaml): each operation called
 * with its parameters' examples answers as the document says (`send()` checks every answer against
 * the document), and the listing examples are the live listing. Also what works for the insights
 * `{path}` (literal slashes; an encoded one is 404) and the country list of the document.
 */
import fs from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';
import { ISO_COUNTRY_CODES } from '../../gateway/validation/iso-countries';
import { getWithKey, removeTempDirs, startGateway, writeGatewayConfig, type Proc } from '../kit/gateway-stack';
import { DOCUMENT_FILE } from '../kit/openapi-conformance';
import { ROOT, startProcess, type RunningProcess } from '../kit/processes';

/** The README's demo keys (config/demo-keys.yaml holds their hashes). */
const DEMO_ADVANCED = 'demo-advanced-3Lp8nW6tJ1';
const DEMO_STANDARD = 'demo-standard-7Qx2mR9vK4';

type Json = Record<string, any>;
const doc = YAML.parse(fs.readFileSync(DOCUMENT_FILE, 'utf8')) as Json;
const deref = (node: Json): Json => (typeof node.$ref === 'string' ? deref(node.$ref.slice(2).split('/').reduce((n: Json, k: string) => n[k], doc)) : node);

let backend: RunningProcess;
let gateway: Proc;

beforeAll(async () => {
  // The data service as `npm start` runs it: 120,000 generated listings, the same every time.
  backend = await startProcess('backend-mock/main.js', { BACKEND_PORT: '0', HOST: '127.0.0.1' }, 60_000);
  gateway = await startGateway({ backendUrl: backend.url, keysFile: path.join(ROOT, 'config', 'demo-keys.yaml'), gatewayConfig: writeGatewayConfig() });
}, 90_000);

afterAll(async () => {
  await gateway?.stop();
  await backend?.stop();
  removeTempDirs();
});

/** Each GET operation's request built from its parameters' examples (every required one has one). */
function exampleRequests(): Array<{ operation: string; url: string }> {
  const out: Array<{ operation: string; url: string }> = [];
  for (const [template, item] of Object.entries(doc.paths as Record<string, Json>)) {
    const op = item.get as Json | undefined;
    if (!op) continue;
    let url = template;
    const query = new URLSearchParams();
    for (const raw of [...(item.parameters ?? []), ...(op.parameters ?? [])] as Json[]) {
      const p = deref(raw);
      if (p.example === undefined) {
        if (p.required) throw new Error(`${op.operationId}: required parameter ${p.name} has no example`);
        continue;
      }
      if (p.in === 'path') url = url.replace(`{${p.name}}`, encodeURIComponent(String(p.example)));
      else if (p.in === 'query') query.set(p.name, String(p.example));
    }
    out.push({ operation: op.operationId, url: query.size ? `${url}?${query}` : url });
  }
  return out;
}

describe('every example, requested live', () => {
  it('each operation called with its parameter examples answers 200 (insights: the documented 503 not_configured)', async () => {
    const requests = exampleRequests();
    expect(requests.map((r) => r.operation)).toEqual(expect.arrayContaining(['ping', 'listProperties', 'getProperty', 'getInsightsPath']));
    for (const { operation, url } of requests) {
      const a = await getWithKey(gateway.url, url, DEMO_ADVANCED);
      const expected = operation.startsWith('getInsights') ? 503 : 200;
      expect({ operation, url, status: a.status }).toEqual({ operation, url, status: expected });
    }
  }, 60_000);

  it('the listing examples are the live listing, field for field', async () => {
    const item = doc.paths['/v1/properties/{id}'].get.responses['200'].content['application/json'].example.data as Json;
    const live = await getWithKey(gateway.url, `/v1/properties/${item.id}?country=${item.country}`, DEMO_STANDARD);
    expect(live.status).toBe(200);
    expect(live.body.data).toEqual(item);
    const page = doc.paths['/v1/properties'].get.responses['200'].content['application/json'].examples.page.value as Json;
    for (const listing of page.data as Json[]) {
      const a = await getWithKey(gateway.url, `/v1/properties/${listing.id}?country=${listing.country}`, DEMO_STANDARD);
      expect(a.body.data).toEqual(listing);
    }
    const schemaId = doc.components.schemas.Listing.properties.id.examples[0];
    expect((await getWithKey(gateway.url, `/v1/properties/${schemaId}?country=GB`, DEMO_STANDARD)).status).toBe(200);
  });

  it('the ping example names a demo key as it is', async () => {
    const example = doc.paths['/v1/ping'].get.responses['200'].content['application/json'].example as Json;
    const a = await getWithKey(gateway.url, '/v1/ping', DEMO_STANDARD);
    expect(a.body).toMatchObject({ key_id: example.key_id, tier: example.tier });
  });
});

describe('the insights path', () => {
  it('deeper sub-paths work written with literal slashes; an encoded slash is 404', async () => {
    for (const sub of ['prices', 'prices/GB', 'prices/GB/2025-03']) {
      const a = await getWithKey(gateway.url, `/v1/insights/${sub}`, DEMO_ADVANCED);
      expect(a.body).toMatchObject({ error: 'not_configured' });
      expect((await getWithKey(gateway.url, `/v1/insights/${sub}`, DEMO_STANDARD)).body).toMatchObject({ error: 'upgrade_required' });
    }
    for (const encoded of ['prices%2FGB', 'prices%2fGB%2F2025-03']) {
      const a = await getWithKey(gateway.url, `/v1/insights/${encoded}`, DEMO_ADVANCED);
      expect(a.body).toMatchObject({ error: 'not_found' });
    }
  });
});

describe('the country parameter', () => {
  it('lists exactly the codes the gateway accepts, in upper and lower case', () => {
    const values = deref(doc.components.parameters.country).schema.enum as string[];
    const upper = [...ISO_COUNTRY_CODES].sort();
    expect(values.filter((v) => v === v.toUpperCase()).sort()).toEqual(upper);
    expect(values.filter((v) => v === v.toLowerCase()).sort()).toEqual(upper.map((c) => c.toLowerCase()));
    expect(values).toHaveLength(upper.length * 2);
  });

  it('a code outside the list is refused live; one inside it is read as documented', async () => {
    expect((await getWithKey(gateway.url, '/v1/properties?country=XK', DEMO_ADVANCED)).body).toMatchObject({ error: 'invalid_parameter', parameter: 'country' });
    expect((await getWithKey(gateway.url, '/v1/properties?country=gb&limit=1', DEMO_ADVANCED)).status).toBe(200);
  });
});
