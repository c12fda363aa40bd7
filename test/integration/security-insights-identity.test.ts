/**
 * Finding 5 of the second security round: what the insights service receives. Never the key, in
 * any spelling; instead the caller's identity (key id, tier, countries, request id, time) in
 * `X-Listings-Caller`, signed with HMAC-SHA256 under INSIGHTS_IDENTITY_SECRET in
 * `X-Listings-Caller-Signature` (gateway/upstream/caller-identity.ts). A `country` parameter outside
 * the key's countries is refused by the gateway; a key copied into the query (double-encoded,
 * base64, base64url) is refused and nothing goes upstream. Checked against the kit's real stub upstream.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import zlib from 'node:zlib';
import { stringify } from 'yaml';
import {
  DEFAULT_TIERS, expectError, gatewayEnv, makeTempDir, randomKeyValue, removeTempDirs, runToExit, send, startGateway, writeKeysFile, writeTempFile, UNLIMITED,
  type KeySpec, type Proc,
} from '../kit/gateway-stack';
import { startStubUpstream, type StubUpstream } from '../kit/stub-upstream';

const SECRET = 'x8Jm2QpL0vN4cR7tY1wZ5bK9dF3hG6sA-_qE0uI2oPw'; // base64url of 32 bytes, for this suite only
const ADV: KeySpec = { id: 'adv-gfd', value: randomKeyValue('adv'), tier: 'advanced', countries: ['GB', 'FR', 'DE'], address: '127.0.0.1', status: 'active', limits: UNLIMITED };

let stub: StubUpstream;
let gateway: Proc;
beforeAll(async () => {
  stub = await startStubUpstream();
  const dir = makeTempDir();
  const config = writeTempFile('gateway.yaml', stringify({ tiers: DEFAULT_TIERS, insights: { upstream: `${stub.url}/insights-api` } }), dir);
  gateway = await startGateway({ backendUrl: stub.url, keysFile: writeKeysFile([ADV], dir), gatewayConfig: config, env: { INSIGHTS_IDENTITY_SECRET: SECRET } });
}, 60_000);
afterAll(async () => {
  await gateway?.stop();
  await stub?.close();
  removeTempDirs();
});

let n = 0;
const ask = (path: string) => {
  const id = `ins-${++n}`;
  return send(gateway.url, path, { headers: { 'x-api-key': ADV.value, 'x-request-id': id } }).then((a) => ({ a, id, upstream: stub.byRequestId(id) }));
};

/** What the insights service must do with the two headers (docs/operating.md, "Several listing stores, insights"): verify, then read. */
function verify(identity: string, signature: string): Record<string, unknown> | undefined {
  const expected = `v1=${createHmac('sha256', Buffer.from(SECRET, 'base64url')).update(identity).digest('base64url')}`;
  if (signature.length !== expected.length || !timingSafeEqual(Buffer.from(signature), Buffer.from(expected))) return undefined;
  return JSON.parse(Buffer.from(identity, 'base64url').toString('utf8')) as Record<string, unknown>;
}

test('finding 5: insights receives a signed identity (key id, tier, countries), never the key', async () => {
  const { a, id, upstream } = await ask('/v1/insights/market?region=north');
  expect(a.status).toBe(200);
  expect(upstream).toHaveLength(1);
  const r = upstream[0]!;
  const identity = String(r.headers['x-listings-caller']);
  const claims = verify(identity, String(r.headers['x-listings-caller-signature']));
  expect(claims).toEqual({ key_id: 'adv-gfd', tier: 'advanced', countries: ['DE', 'FR', 'GB'], request_id: id, iat: expect.any(Number) });
  expect(Math.abs((claims!.iat as number) - Date.now() / 1000)).toBeLessThan(60);
  // A forged identity does not verify.
  const forged = Buffer.from(JSON.stringify({ ...claims, countries: ['JP'] })).toString('base64url');
  expect(verify(forged, String(r.headers['x-listings-caller-signature']))).toBeUndefined();
  // Nothing of the key anywhere in what went upstream.
  const everything = JSON.stringify([r.url, r.rawHeaders]);
  expect(everything).not.toContain(ADV.value.slice(4));
  expect(everything).not.toContain(Buffer.from(ADV.value).toString('base64').slice(0, 20));
});

test('finding 5: a country outside the key\'s countries is refused before insights; one inside goes through', async () => {
  const outside = await ask('/v1/insights/market?country=JP&country=US');
  expectError(outside.a, 'country_not_entitled');
  expect(outside.upstream).toEqual([]);
  const inside = await ask('/v1/insights/market?country=gb');
  expect(inside.a.status).toBe(200);
  expect(inside.upstream).toHaveLength(1);
});

test('finding 5: copies of the key in the query (double-encoded, base64, base64url) are refused, nothing upstream', async () => {
  const v = ADV.value;
  const copies = [
    `%25${v.charCodeAt(0).toString(16)}${v.slice(1)}`,
    encodeURIComponent(encodeURIComponent(`k:${v}`)),
    encodeURIComponent(Buffer.from(v).toString('base64')),
    Buffer.from(v).toString('base64url'),
    encodeURIComponent(Buffer.from(`Bearer ${v}`).toString('base64')),
  ];
  for (const copy of copies) {
    for (const path of [`/v1/insights/market?q=${copy}`, `/v1/insights/market?${copy}=1`]) {
      const { a, upstream } = await ask(path);
      expect({ path, status: a.status, error: a.body?.error, upstream: upstream.length }).toEqual({ path, status: 400, error: 'invalid_parameter', upstream: 0 });
    }
  }
});

/** The raw bytes of an insights answer (node:http does not decode, so the test sees what was sent). */
function rawInsights(path: string, acceptEncoding: string): Promise<{ status: number; encoding?: string; vary?: string; bytes: Buffer }> {
  const url = new URL(gateway.url);
  return new Promise((resolve, reject) => {
    http.get({ host: url.hostname, port: url.port, path, agent: false, headers: { 'x-api-key': ADV.value, 'accept-encoding': acceptEncoding } }, (res) => {
      const parts: Buffer[] = [];
      res.on('data', (d: Buffer) => parts.push(d));
      res.on('end', () => resolve({ status: res.statusCode!, encoding: res.headers['content-encoding'], vary: res.headers.vary as string | undefined, bytes: Buffer.concat(parts) }));
    }).on('error', reject);
  });
}

test('an insights answer is compressed per Accept-Encoding as the other /v1 answers are (docs/observing.md)', async () => {
  const plain = await rawInsights('/v1/insights/market?region=north', 'identity');
  expect(plain.status).toBe(200);
  expect(plain.encoding).toBeUndefined();
  expect(plain.vary).toBe('Accept-Encoding');
  // The stub's answer is under 1,024 bytes: compressed only for a caller that refuses identity.
  const small = await rawInsights('/v1/insights/market?region=north', 'gzip');
  expect(small.encoding).toBeUndefined();
  const refused = await rawInsights('/v1/insights/market?region=north', 'gzip, identity;q=0');
  expect(refused.status).toBe(200);
  expect(refused.encoding).toBe('gzip');
  expect(refused.vary).toBe('Accept-Encoding');
  const decoded = JSON.parse(zlib.gunzipSync(refused.bytes).toString()) as unknown;
  expect(Object.keys(decoded as object).sort()).toEqual(Object.keys(JSON.parse(plain.bytes.toString()) as object).sort());
});

test('insights configured without INSIGHTS_IDENTITY_SECRET: start-up stops with one line naming the variable', async () => {
  const dir = makeTempDir();
  const config = writeTempFile('gateway.yaml', stringify({ tiers: DEFAULT_TIERS, insights: { upstream: stub.url } }), dir);
  const r = await runToExit('gateway/main.js', gatewayEnv(writeKeysFile([ADV], dir), config, { INSIGHTS_IDENTITY_SECRET: '' }));
  expect(r.code).toBe(1);
  expect(r.stderr.trim().split('\n')).toEqual([expect.stringMatching(/^config error: environment variable INSIGHTS_IDENTITY_SECRET: required when .*gateway\.yaml sets insights\.upstream/)]);
});
