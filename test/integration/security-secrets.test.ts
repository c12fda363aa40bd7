/**
 * What leaves the gateway, towards the data service and towards the caller:
 *
 * - upstream requests (listings and insights) carry the gateway's own headers only: never
 *   `x-api-key`, the caller's hop-by-hop headers (`Connection` and the headers it names,
 *   `Keep-Alive`, `TE`, `Upgrade`, `Proxy-*`) or credentials (`Authorization`, `Cookie`), never a key value;
 * - a key pasted into the URL is not passed to an upstream;
 * - every one of the fourteen error codes, provoked for real, is exactly the contract's body
 *   (JSON, `Cache-Control: no-store`, no `X-Powered-By`, `Retry-After` on 429/503, `Allow` on 405)
 *   and carries neither the key value sent nor anything of the upstream.
 *
 * Logs are held by every suite that ends with the log check (gateway-*.test.ts for URLs and
 * `?api_key=`, reliability-redis-faults.test.ts for outages); duplicate `x-api-key` headers by
 * gateway-surface.test.ts.
 */
import net from 'node:net';
import { stringify } from 'yaml';
import {
  UNLIMITED,
  DEFAULT_TIERS,
  ERROR_CATALOGUE,
  expectError,
  expectKeyedSuccess,
  makeTempDir,
  randomKeyValue,
  removeTempDirs,
  send,
  eventually,
  sleep,
  startGateway,
  writeKeysFile,
  writeTempFile,
  type Answer,
  type ErrorCode,
  type KeySpec,
  type Proc,
  type SendOptions,
} from '../kit/gateway-stack';
import { startStubUpstream, UPSTREAM_SECRET_MARKERS, type StubUpstream } from '../kit/stub-upstream';

const key = (id: string, over: Partial<KeySpec> = {}): KeySpec => ({
  id,
  value: randomKeyValue(id),
  tier: 'standard',
  countries: ['GB'],
  address: '127.0.0.1',
  status: 'active',
  limits: UNLIMITED,
  ...over,
});
const KEYS: KeySpec[] = [
  key('std'),
  key('adv', { tier: 'advanced' }),
  key('one-a-minute', { limits: { per_minute: 1, per_day: 1000, per_month: 10_000 } }),
  key('one-a-day', { limits: { per_minute: 1000, per_day: 1, per_month: 10_000 } }),
  key('paused', { status: 'paused', pause_reason: 'payment_dispute' }),
  key('revoked', { status: 'revoked' }),
  key('elsewhere', { address: '203.0.113.7' }),
];
const value = (id: string): string => KEYS.find((k) => k.id === id)!.value;
const UNKNOWN = randomKeyValue('never-issued');
const ALL_VALUES = [...KEYS.map((k) => k.value), UNKNOWN];

let stub: StubUpstream;
let withInsights: Proc; // insights proxied to the stub
let withoutInsights: Proc; // insights not configured

beforeAll(async () => {
  stub = await startStubUpstream();
  const dir = makeTempDir();
  const keysFile = writeKeysFile(KEYS, dir);
  const configWith = writeTempFile('with.yaml', stringify({ tiers: DEFAULT_TIERS, insights: { upstream: `${stub.url}/insights-api` } }), dir);
  const configWithout = writeTempFile('without.yaml', stringify({ tiers: DEFAULT_TIERS }), dir);
  const env = { UPSTREAM_TIMEOUT_MS: '600' };
  [withInsights, withoutInsights] = await Promise.all([
    startGateway({ backendUrl: stub.url, keysFile, gatewayConfig: configWith, env }),
    startGateway({ backendUrl: stub.url, keysFile, gatewayConfig: configWithout, env }),
  ]);
}, 30_000);
afterAll(async () => {
  await Promise.all([withInsights?.stop(), withoutInsights?.stop()]);
  await stub?.close();
  removeTempDirs();
});
beforeEach(() => {
  stub.mode = 'ok';
});

/** Nothing of any key value, and nothing of the upstream, in the body or a header of an answer. */
function expectNoSecrets(a: Answer): void {
  const headerText = Object.entries(a.headers).map(([n, v]) => `${n}: ${String(v)}`).join('\n');
  for (const secret of [...ALL_VALUES, ...UPSTREAM_SECRET_MARKERS, String(stub.port)]) {
    expect(a.text).not.toContain(secret);
    expect(headerText).not.toContain(secret);
  }
}

describe('requests to the upstreams carry the gateway\'s own headers only', () => {
  // x-page-format: the page format the gateway asks a listing store for (its own header, a fixed value).
  const ALLOWED = ['accept', 'accept-encoding', 'connection', 'host', 'x-page-format', 'x-request-id'];
  const SENT: Record<string, string> = {
    connection: 'keep-alive, x-hop-secret, keep-alive',
    'x-hop-secret': 'hop-by-hop-value',
    'keep-alive': 'timeout=5, max=100',
    te: 'trailers',
    'proxy-authorization': 'Basic cHJveHk6c2VjcmV0',
    'proxy-connection': 'keep-alive',
    authorization: 'Bearer caller-bearer-token',
    cookie: 'session=caller-cookie',
    'x-forwarded-for': '198.51.100.7',
    'x-forwarded-host': 'evil.example',
    'x-forwarded-proto': 'http',
    forwarded: 'for=198.51.100.7;host=evil.example',
    via: '1.1 caller-proxy',
    'x-real-ip': '198.51.100.7',
    'x-original-url': '/internal/admin',
    'x-http-method-override': 'DELETE',
    'x-custom': 'caller-custom',
    'accept-encoding': 'br, gzip',
  };
  const CASES: Array<[string, string, string]> = [
    ['a page', '/v1/properties?country=GB&limit=2', 'std'],
    ['a listing', '/v1/properties/abc-1?country=GB', 'std'],
    ['insights', '/v1/insights/market?region=GB', 'adv'],
  ];

  test.each(CASES)('%s: no caller header, no key value upstream', async (_label, path, keyId) => {
    const id = `sec-hdr-${keyId}-${path.length}`;
    const a = await send(withInsights.url, path, { headers: { ...SENT, 'x-api-key': value(keyId), 'x-request-id': id } });
    expectKeyedSuccess(a);
    const [upstream, ...more] = stub.byRequestId(id);
    expect(more).toEqual([]);
    // Insights also gets the gateway's signed caller identity (security-insights-identity.test.ts).
    const allowed = path.startsWith('/v1/insights') ? [...ALLOWED, 'x-listings-caller', 'x-listings-caller-signature'].sort() : ALLOWED;
    expect(Object.keys(upstream!.headers).sort()).toEqual(allowed.filter((h) => h in upstream!.headers));
    if (path.startsWith('/v1/insights')) expect(upstream!.headers['x-listings-caller-signature']).toMatch(/^v1=/);
    expect(upstream!.headers.connection ?? 'keep-alive').toBe('keep-alive');
    expect(upstream!.headers['x-page-format'] ?? 'public-array').toBe('public-array');
    expect(upstream!.headers['accept-encoding']).toBe('identity'); // the gateway's, not the caller's
    const everything = `${upstream!.url}\n${upstream!.rawHeaders.join('\n')}`;
    for (const v of [...ALL_VALUES, ...Object.values(SENT).filter((s) => s !== 'keep-alive' && s !== 'http' && s !== 'trailers')]) expect(everything).not.toContain(v);
  });

  test('a request asking to upgrade the connection is not upgraded, and the upgrade is not passed on', async () => {
    const id = 'sec-hdr-upgrade';
    const text = await new Promise<string>((resolve) => {
      const socket = net.connect(withInsights.port, '127.0.0.1');
      let received = '';
      socket.on('data', (d: Buffer) => {
        received += d.toString('latin1');
      });
      socket.on('error', () => undefined);
      socket.on('close', () => resolve(received));
      socket.write(
        `GET /v1/properties?country=GB HTTP/1.1\r\nHost: x\r\nConnection: Upgrade, x-hop-secret\r\nUpgrade: websocket\r\nx-hop-secret: 1\r\n` +
          `x-api-key: ${value('std')}\r\nx-request-id: ${id}\r\n\r\n`,
      );
      setTimeout(() => socket.end(), 500);
    });
    expect(text).not.toMatch(/^HTTP\/1\.1 101/);
    // Answered as an ordinary GET, once, without the upgrade.
    expect(text).toMatch(/^HTTP\/1\.1 200 /);
    expect(stub.byRequestId(id)).toHaveLength(1);
    for (const r of stub.byRequestId(id)) {
      expect(r.headers.upgrade).toBeUndefined();
      expect(r.headers['x-hop-secret']).toBeUndefined();
    }
  });
});

describe('a key pasted into the URL never reaches an upstream', () => {
  test('a key in the project\'s format as a parameter name is not echoed in the answer', async () => {
    const other = 'plk_0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQ';
    for (const path of [`/v1/properties?country=GB&${other}=1`, `/v1/properties/abc-1?country=GB&${other}`, `/v1/ping?${encodeURIComponent(other)}`]) {
      const a = await send(withInsights.url, path, { headers: { 'x-api-key': value('std') } });
      expectError(a, 'invalid_parameter', { parameter: 'query' });
      expect(a.text).not.toContain('plk_');
    }
  });

  test('listings: refused as an unknown parameter, nothing upstream', async () => {
    for (const path of [`/v1/properties?country=GB&api_key=${value('std')}`, `/v1/properties?country=GB&${value('std')}`]) {
      const id = `sec-paste-${path.length}`;
      const a = await send(withInsights.url, path, { headers: { 'x-api-key': value('std'), 'x-request-id': id } });
      expectError(a, 'invalid_parameter', { parameter: expect.any(String) });
      expect(stub.byRequestId(id)).toEqual([]);
    }
  });

  // The insights proxy refuses a query that carries a key (gateway/routes/insights.ts): nothing goes upstream.
  test('insights: ?api_key=<the key> is refused and not passed on to the insights service', async () => {
    const id = 'sec-paste-insights';
    const a = await send(withInsights.url, `/v1/insights/market?region=GB&api_key=${value('adv')}`, { headers: { 'x-api-key': value('adv'), 'x-request-id': id } });
    expectError(a, 'invalid_parameter', { parameter: 'api_key' });
    expect(a.text).not.toContain(value('adv'));
    expect(stub.byRequestId(id)).toEqual([]);
    const bare = await send(withInsights.url, `/v1/insights/market?${value('adv')}`, { headers: { 'x-api-key': value('adv'), 'x-request-id': `${id}-bare` } });
    expectError(bare, 'invalid_parameter', { parameter: 'query' });
    expect(stub.byRequestId(`${id}-bare`)).toEqual([]);
    // Inside a value, or in the path: refused too, never forwarded, never logged.
    const inside = await send(withInsights.url, `/v1/insights/market?q=${encodeURIComponent(`k:${value('adv')}`)}`, { headers: { 'x-api-key': value('adv'), 'x-request-id': `${id}-inside` } });
    expectError(inside, 'invalid_parameter', { parameter: 'q' });
    expect(stub.byRequestId(`${id}-inside`)).toEqual([]);
    const inPath = await send(withInsights.url, `/v1/insights/${encodeURIComponent(value('adv'))}`, { headers: { 'x-api-key': value('adv'), 'x-request-id': `${id}-path` } });
    expectError(inPath, 'not_found');
    expect(stub.byRequestId(`${id}-path`)).toEqual([]);
  });
});

describe('a key sent as the request id', () => {
  // The request id is echoed, logged and forwarded: a client that puts its key there (or a key in
  // this project's format) gets a generated id instead.
  test.each([
    ['the caller\'s own key', (): string => value('std')],
    ['a key in the project\'s format', (): string => 'plk_0123456789abcdefghij'],
  ])('%s is not answered, forwarded or logged', async (_label, id) => {
    const requestId = id();
    const before = stub.requests.length;
    const linesBefore = withInsights.output.length;
    const a = await send(withInsights.url, '/v1/properties?country=GB&limit=1', { headers: { 'x-api-key': value('std'), 'x-request-id': requestId } });
    expectKeyedSuccess(a);
    expect(a.headers['x-request-id']).not.toBe(requestId);
    expect(a.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    expect(stub.requests.length).toBe(before + 1);
    expect(stub.requests[before]!.headers['x-request-id']).toBe(a.headers['x-request-id']);
    // The line of this answer is written once the answer is done: wait for it.
    await eventually('the answer logged', () => withInsights.output.slice(linesBefore).some((l) => l.includes(String(a.headers['x-request-id']))), { timeoutMs: 5000, intervalMs: 20 });
    const lines = withInsights.output.slice(linesBefore);
    expect(lines.some((l) => l.includes(String(a.headers['x-request-id'])))).toBe(true);
    expect(lines.filter((l) => l.includes(requestId))).toEqual([]);
  });
});

describe('every error code, provoked for real: the contract body and nothing secret', () => {
  const as = (keyId: string | null, path: string, options: SendOptions = {}, gateway = withInsights): Promise<Answer> =>
    send(gateway.url, path, { ...options, headers: { ...(keyId === null ? {} : { 'x-api-key': keyId === 'unknown' ? UNKNOWN : value(keyId) }), ...options.headers } });

  const CASES: Array<[ErrorCode, () => Promise<Answer>, Record<string, unknown>]> = [
    ['invalid_cursor', () => as('std', '/v1/properties?country=GB&cursor=not-a-cursor'), {}],
    ['invalid_parameter', () => as('std', '/v1/properties?country=GB&colour=red'), { parameter: 'colour' }],
    ['unauthenticated', () => as('unknown', '/v1/ping'), {}],
    ['country_not_entitled', () => as('std', '/v1/properties?country=DE'), {}],
    ['ip_not_allowed', () => as('elsewhere', '/v1/ping'), { ip: '127.0.0.1' }],
    ['key_paused', () => as('paused', '/v1/ping'), {}],
    ['upgrade_required', () => as('std', '/v1/insights/market'), {}],
    ['not_found', () => as('std', '/v1/nowhere'), {}],
    ['method_not_allowed', () => as('std', '/v1/ping', { method: 'DELETE' }), {}],
    ['quota_exceeded', async () => (await as('one-a-day', '/v1/ping'), as('one-a-day', '/v1/ping')), {}],
    ['rate_limited', async () => (await as('one-a-minute', '/v1/ping'), as('one-a-minute', '/v1/ping')), {}],
    ['internal_error', async () => { stub.mode = '500-stack'; return as('std', '/v1/properties?country=GB'); }, {}],
    ['not_configured', () => as('adv', '/v1/insights/market', {}, withoutInsights), {}],
    ['service_unavailable', async () => { stub.mode = 'hang'; return as('std', '/v1/properties/abc-1?country=GB'); }, {}],
  ];

  test('the cases cover the whole catalogue', () => {
    expect(CASES.map(([code]) => code).sort()).toEqual(Object.keys(ERROR_CATALOGUE).sort());
  });

  test.each(CASES)('%s', async (code, provoke, extras) => {
    const a = await provoke();
    expectError(a, code, extras);
    expect(a.body.message).toBe(a.body.message.trim());
    expect(a.text).not.toMatch(/\bat \S+ \(|node:internal|\/srv\/|Error:/);
    expectNoSecrets(a);
  });

  test('a revoked key and a key twice get the same 401 as an unknown one, with no key value in it', async () => {
    const unknown = await as('unknown', '/v1/ping');
    for (const a of [await as('revoked', '/v1/ping'), await as(null, '/v1/ping', { headers: { 'x-api-key': [value('std'), value('std')] } })]) {
      expectError(a, 'unauthenticated');
      expect(a.text).toBe(unknown.text);
      expectNoSecrets(a);
    }
  });

  test('the gateways are still up', async () => {
    await sleep(100);
    stub.mode = 'ok';
    expectKeyedSuccess(await as('std', '/v1/properties?country=GB'));
    for (const g of [withInsights, withoutInsights]) expect(g.child.exitCode).toBeNull();
  });
});
