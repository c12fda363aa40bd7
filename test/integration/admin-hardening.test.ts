/**
 * The admin listener against the outside attack of issue 23 (findings 6, 7 and 12), on a real
 * gateway and redis-server: bad cursors and dates are 400, not 500; a JSON body that is not an
 * object and a compressed body are 400; `?done=constructor` shows no function; a foreign `Host`
 * (DNS rebinding) is 421; wrong tokens and wrong sign-ins are budgeted per address (429 after 10 a
 * minute, logged with the address). Requests are sent with node:http so `Host` and the source
 * address (127.0.0.x: each budget test has its own) are the test's to choose.
 */
import http from 'node:http';
import { gzipSync } from 'node:zlib';
import { fixtureListings } from '../fixtures/listings';
import { readyAdminUrl } from '../kit/admin-api';
import { makeTempDir, removeTempDirs, startBackend, startGateway, writeGatewayConfig, writeKeysFile, writeListingsFile, type Proc } from '../kit/gateway-stack';
import { startRedis, type RedisServer } from '../kit/redis-server';

jest.setTimeout(60_000);

const ADMIN_TOKEN = 'admin-token-for-hardening-tests-0123456789';
let redis: RedisServer;
let backend: Proc;
let gateway: Proc;
let admin: URL;

interface Reply {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
}

function request(method: string, path: string, o: { headers?: Record<string, string>; body?: string | Buffer; from?: string } = {}): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = http.request({
      host: admin.hostname, port: admin.port, method, path, headers: o.headers ?? {}, ...(o.from ? { localAddress: o.from } : {}), agent: false,
    }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') }));
    });
    req.on('error', reject);
    req.end(o.body);
  });
}
const bearer = (token = ADMIN_TOKEN): Record<string, string> => ({ authorization: `Bearer ${token}` });
/** Waits for a line of the gateway's output (lines arrive through a pipe, a little after the answer). */
async function logged(match: (line: string) => boolean): Promise<boolean> {
  for (let i = 0; i < 200; i++) {
    if (gateway.output.some(match)) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return false;
}
const json = (r: Reply): { error?: string; parameter?: string; message?: string } => JSON.parse(r.text) as { error?: string };

async function signIn(): Promise<string> {
  const r = await request('POST', '/console/sign-in', { headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: `token=${encodeURIComponent(ADMIN_TOKEN)}` });
  expect(r.status).toBe(303);
  return String(r.headers['set-cookie']![0]).split(';')[0]!;
}

beforeAll(async () => {
  redis = await startRedis();
  backend = await startBackend(writeListingsFile(fixtureListings()));
  const dir = makeTempDir();
  gateway = await startGateway({
    backendUrl: backend.url,
    keysFile: writeKeysFile([], dir),
    gatewayConfig: writeGatewayConfig(undefined, dir),
    env: { REDIS_URL: redis.url, KEY_STORE: 'redis', ADMIN_PORT: '0', ADMIN_TOKEN, ADMIN_ALLOWED_HOSTS: 'admin.internal, ops.example' },
  });
  admin = new URL(await readyAdminUrl(gateway, ADMIN_TOKEN));
  const created = await request('POST', '/admin/keys', { headers: { ...bearer(), 'content-type': 'application/json' }, body: JSON.stringify({ id: 'hard-1', tier: 'standard', countries: ['GB'], address: '127.0.0.1' }) });
  expect(created.status).toBe(201);
}, 90_000);

afterAll(async () => {
  await gateway?.stop();
  await backend?.stop();
  await redis?.stop();
  removeTempDirs();
});

describe('bad input is 400, never 500 (finding 7)', () => {
  it.each([
    ['a key list cursor past 64 bits', '/admin/keys?cursor=99999999999999999999-99999', 'cursor'],
    ['a tampered audit cursor', `/admin/audit?cursor=${Buffer.from('a1:99999999999999999999-1').toString('base64url')}`, 'cursor'],
    ['an audit cursor at 0-0', `/admin/audit?cursor=${Buffer.from('a1:0-0').toString('base64url')}`, 'cursor'],
    ['an audit date before 1970', '/admin/audit?since=1969-12-31T23:59:59Z', 'since'],
  ])('%s', async (_what, path, parameter) => {
    const r = await request('GET', path, { headers: bearer() });
    expect({ status: r.status, ...json(r) }).toMatchObject({ status: 400, error: 'invalid_parameter', parameter });
  });

  it('the console\'s audit page with since=0000-01-01', async () => {
    const cookie = await signIn();
    const r = await request('GET', '/console/audit?since=0000-01-01', { headers: { cookie } });
    expect(r.status).toBe(400);
    expect(r.text).toContain('since');
    expect(gateway.output.join('\n')).not.toContain('console request failed');
  });
});

describe('bodies and pages (finding 12)', () => {
  const patch = (body: string | Buffer, headers: Record<string, string> = {}) =>
    request('PATCH', '/admin/keys/hard-1', { headers: { ...bearer(), 'content-type': 'application/json', ...headers }, body });

  it('a PATCH whose body is a JSON array, or 20,000 nested arrays, is 400', async () => {
    for (const body of ['[]', '[{"note":"x"}]', `${'['.repeat(20_000)}${']'.repeat(20_000)}`]) {
      const r = await patch(body);
      expect({ status: r.status, ...json(r) }).toMatchObject({ status: 400, error: 'invalid_parameter', parameter: 'body' });
    }
    expect((await patch('{"note":"plain"}')).status).toBe(200);
  });

  it('a gzip body is refused as the message says', async () => {
    const r = await patch(gzipSync('{"note":"zipped"}'), { 'content-encoding': 'gzip' });
    expect({ status: r.status, ...json(r) }).toMatchObject({ status: 400, error: 'invalid_parameter', parameter: 'body' });
    expect(json(r).message).toContain('not compressed');
  });

  it('?done=constructor on a key page names no message (no object function rendered)', async () => {
    const cookie = await signIn();
    const r = await request('GET', '/console/keys/hard-1?done=constructor', { headers: { cookie } });
    expect(r.status).toBe(200);
    expect(r.text).not.toContain('[native code]');
    expect(r.text).not.toMatch(/function Object/);
  });
});

describe('Host is checked (DNS rebinding, finding 12)', () => {
  it.each(['/admin/openapi.json', '/admin/keys', '/console/sign-in'])('a foreign name is 421 misdirected_request on %s', async (path) => {
    const r = await request('GET', path, { headers: { ...bearer(), host: `rebind.attacker.example:${admin.port}` } });
    expect({ status: r.status, ...json(r) }).toMatchObject({ status: 421, error: 'misdirected_request' });
  });

  it.each(['localhost', '127.0.0.1', 'admin.internal', 'ADMIN.INTERNAL.', 'ops.example'])('%s is answered', async (name) => {
    expect((await request('GET', '/admin/keys?limit=1', { headers: { ...bearer(), host: `${name}:${admin.port}` } })).status).toBe(200);
  });
});

describe('guessing budgets per address (finding 6)', () => {
  it('the admin API: 10 wrong tokens a minute, then 429 for everything from that address, logged with it', async () => {
    const from = '127.0.0.7';
    for (let i = 0; i < 10; i++) expect((await request('GET', '/admin/keys', { headers: bearer(`wrong-token-${i}-0123456789abcdef`), from })).status).toBe(401);
    const refused = await request('GET', '/admin/keys', { headers: bearer(), from });
    expect({ status: refused.status, ...json(refused) }).toMatchObject({ status: 429, error: 'rate_limited' });
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    expect(await logged((l) => l.includes('too many failures from this address') && l.includes(from))).toBe(true);
    // Another address is not affected.
    expect((await request('GET', '/admin/keys?limit=1', { headers: bearer(), from: '127.0.0.8' })).status).toBe(200);
  });

  it('console sign-in: the failure line names the address; 10 wrong a minute, then a 429 page', async () => {
    const from = '127.0.0.9';
    const wrong = () => request('POST', '/console/sign-in', { headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'token=not-the-token-0123456789', from });
    for (let i = 0; i < 10; i++) expect((await wrong()).status).toBe(401);
    expect(await logged((l) => l.includes('console sign-in refused') && l.includes(from))).toBe(true);
    const refused = await request('POST', '/console/sign-in', { headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: `token=${encodeURIComponent(ADMIN_TOKEN)}`, from });
    expect(refused.status).toBe(429);
    expect(refused.headers['content-type']).toContain('text/html');
    expect(refused.text).toContain('rate_limited');
  });
});
