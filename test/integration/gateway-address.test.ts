/**
 * Source-address binding, tested over real sockets: local addresses 127.0.0.1 / 127.0.0.2 (both
 * loopback on Linux), IPv4-mapped registrations, a dual-stack gateway (HOST=::), X-Forwarded-For
 * ignored without TRUST_PROXY and honoured (right-most untrusted address) with it, and blanket
 * trust refused at start-up.
 */
import {
  expectError,
  expectKeyedSuccess,
  gatewayEnv,
  ipv6LoopbackWorksNow,
  testWithIpv6,
  randomKeyValue,
  removeTempDirs,
  runToExit,
  send,
  startStack,
  writeGatewayConfig,
  writeKeysFile,
  type Answer,
  type KeySpec,
  type Proc,
  type SendOptions,
  type Stack,
  expectNoKeyValueLogged,
} from '../kit/gateway-stack';
import { fixtureListings, sampleIds } from '../fixtures/listings';

const LISTINGS = fixtureListings();
const IDS = sampleIds(LISTINGS);

const key = (id: string, address: string, over: Partial<KeySpec> = {}): KeySpec => ({
  id,
  value: randomKeyValue(id),
  tier: 'standard',
  countries: ['GB'],
  address,
  status: 'active',
  ...over,
});

const KEYS: KeySpec[] = [
  key('local1', '127.0.0.1'),
  key('local2', '127.0.0.2'),
  key('mapped1', '::ffff:127.0.0.1'),
  key('mapped2-hex', '::ffff:7f00:2'),
  key('v6', '::1'),
  key('v6-long', '0:0:0:0:0:0:0:1'),
  key('far', '203.0.113.9'),
];

let stack: Stack;
let proxied: Proc; // TRUST_PROXY=127.0.0.1/32
let dual: Proc | undefined; // HOST=::
let dualProxied: Proc | undefined; // HOST=::, TRUST_PROXY=127.0.0.1/32
let v6 = false;

const as = (base: string, keyId: string, path: string, options: SendOptions = {}): Promise<Answer> =>
  send(base, path, { ...options, headers: { 'x-api-key': stack.key(keyId).value, ...options.headers } });

beforeAll(async () => {
  v6 = ipv6LoopbackWorksNow();
  stack = await startStack({ keys: KEYS, listings: LISTINGS, gateways: [{}, { TRUST_PROXY: '127.0.0.1/32' }] });
  proxied = stack.gateways[1]!;
  if (v6) {
    [dual, dualProxied] = await Promise.all([stack.startGateway({ HOST: '::' }), stack.startGateway({ HOST: '::', TRUST_PROXY: '127.0.0.1/32' })]);
  }
});
afterAll(async () => {
  await stack?.stop();
  removeTempDirs();
});

const PATHS = ['/v1/ping', '/v1/properties?country=GB', `/v1/properties/${IDS.publishedGb}?country=GB`];

describe('binding to the source address', () => {
  test.each(PATHS)('a key bound to 127.0.0.2 works from 127.0.0.2 on %s', async (path) => {
    expectKeyedSuccess(await as(stack.url, 'local2', path, { localAddress: '127.0.0.2' }));
  });

  test.each([...PATHS, '/v1/insights'])('the same key from 127.0.0.1 gets ip_not_allowed with ip 127.0.0.1 on %s', async (path) => {
    expectError(await as(stack.url, 'local2', path, { localAddress: '127.0.0.1' }), 'ip_not_allowed', { ip: '127.0.0.1' });
  });

  test('ping reports the address seen', async () => {
    expect((await as(stack.url, 'local2', '/v1/ping', { localAddress: '127.0.0.2' })).body).toStrictEqual({
      ip: '127.0.0.2',
      key_id: 'local2',
      tier: 'standard',
    });
    expectError(await as(stack.url, 'local1', '/v1/ping', { localAddress: '127.0.0.2' }), 'ip_not_allowed', { ip: '127.0.0.2' });
    expectError(await as(stack.url, 'far', '/v1/ping'), 'ip_not_allowed', { ip: '127.0.0.1' });
  });

  test('a key registered as ::ffff:127.0.0.1 works from 127.0.0.1 (and ::ffff:7f00:2 from 127.0.0.2)', async () => {
    const a = await as(stack.url, 'mapped1', '/v1/ping', { localAddress: '127.0.0.1' });
    expectKeyedSuccess(a);
    expect(a.body.ip).toBe('127.0.0.1');
    expectKeyedSuccess(await as(stack.url, 'mapped1', '/v1/properties?country=GB', { localAddress: '127.0.0.1' }));
    expectKeyedSuccess(await as(stack.url, 'mapped2-hex', '/v1/ping', { localAddress: '127.0.0.2' }));
    expectError(await as(stack.url, 'mapped1', '/v1/ping', { localAddress: '127.0.0.2' }), 'ip_not_allowed', { ip: '127.0.0.2' });
  });

  testWithIpv6()('a dual-stack gateway (HOST=::): IPv4 clients are seen as IPv4, IPv6 as IPv6', async () => {
    if (!dual) throw new Error('the dual-stack gateway did not start');
    const v4 = await as(dual.url, 'local1', '/v1/ping', { host: '127.0.0.1' });
    expectKeyedSuccess(v4);
    expect(v4.body.ip).toBe('127.0.0.1');
    expectKeyedSuccess(await as(dual.url, 'local1', '/v1/properties?country=GB', { host: '127.0.0.1' }));
    expectKeyedSuccess(await as(dual.url, 'local2', '/v1/ping', { host: '127.0.0.1', localAddress: '127.0.0.2' }));
    expectKeyedSuccess(await as(dual.url, 'mapped1', '/v1/ping', { host: '127.0.0.1' }));

    const six = await as(dual.url, 'v6', '/v1/ping', { host: '::1' });
    expectKeyedSuccess(six);
    expect(six.body.ip).toBe('::1');
    expectKeyedSuccess(await as(dual.url, 'v6-long', '/v1/ping', { host: '::1' }));
    expectError(await as(dual.url, 'local1', '/v1/ping', { host: '::1' }), 'ip_not_allowed', { ip: '::1' });
    expectError(await as(dual.url, 'v6', '/v1/ping', { host: '127.0.0.1' }), 'ip_not_allowed', { ip: '127.0.0.1' });
  });
});

describe('X-Forwarded-For without TRUST_PROXY is ignored', () => {
  test('spoofing 127.0.0.2 does not help', async () => {
    for (const header of ['127.0.0.2', '10.0.0.1, 127.0.0.2', '::ffff:127.0.0.2']) {
      expectError(await as(stack.url, 'local2', '/v1/ping', { headers: { 'x-forwarded-for': header } }), 'ip_not_allowed', { ip: '127.0.0.1' });
    }
    expectError(
      await as(stack.url, 'local2', '/v1/ping', { headers: { forwarded: 'for=127.0.0.2', 'x-real-ip': '127.0.0.2', 'x-client-ip': '127.0.0.2' } }),
      'ip_not_allowed',
      { ip: '127.0.0.1' },
    );
  });

  test('a forwarded address does not lock out the real one', async () => {
    const a = await as(stack.url, 'local1', '/v1/ping', { headers: { 'x-forwarded-for': '203.0.113.9' } });
    expectKeyedSuccess(a);
    expect(a.body.ip).toBe('127.0.0.1');
    expectError(await as(stack.url, 'far', '/v1/ping', { headers: { 'x-forwarded-for': '203.0.113.9' } }), 'ip_not_allowed', { ip: '127.0.0.1' });
  });
});

describe('X-Forwarded-For with TRUST_PROXY=127.0.0.1/32', () => {
  const ping = (keyId: string, xff: string | undefined, localAddress = '127.0.0.1'): Promise<Answer> =>
    as(proxied.url, keyId, '/v1/ping', { localAddress, headers: xff === undefined ? {} : { 'x-forwarded-for': xff } });

  test('a request through the trusted proxy is seen from the forwarded address', async () => {
    const a = await ping('local2', '127.0.0.2');
    expectKeyedSuccess(a);
    expect(a.body.ip).toBe('127.0.0.2');
    expectKeyedSuccess(await as(proxied.url, 'local2', '/v1/properties?country=GB', { headers: { 'x-forwarded-for': '127.0.0.2' } }));
    expectError(await ping('local1', '127.0.0.2'), 'ip_not_allowed', { ip: '127.0.0.2' });
  });

  test('the right-most untrusted address is used', async () => {
    // A client-supplied left part cannot choose the address.
    const a = await ping('local2', '203.0.113.9, 127.0.0.2');
    expectKeyedSuccess(a);
    expect(a.body.ip).toBe('127.0.0.2');
    expectError(await ping('local2', '127.0.0.2, 203.0.113.9'), 'ip_not_allowed', { ip: '203.0.113.9' });
    expectError(await ping('far', '203.0.113.9, 198.51.100.4'), 'ip_not_allowed', { ip: '198.51.100.4' });
    // Trusted hops on the right are skipped.
    const b = await ping('local2', '203.0.113.9, 127.0.0.2, 127.0.0.1');
    expectKeyedSuccess(b);
    expect(b.body.ip).toBe('127.0.0.2');
    const c = await ping('far', '203.0.113.9');
    expectKeyedSuccess(c);
    expect(c.body.ip).toBe('203.0.113.9');
  });

  test('an IPv4-mapped forwarded address is normalised, and a mapped trusted hop is skipped', async () => {
    const a = await ping('local2', '::ffff:127.0.0.2');
    expectKeyedSuccess(a);
    expect(a.body.ip).toBe('127.0.0.2');
    const b = await ping('local2', '127.0.0.2, ::ffff:127.0.0.1');
    expectKeyedSuccess(b);
    expect(b.body.ip).toBe('127.0.0.2');
  });

  testWithIpv6()('on a dual-stack gateway (HOST=::) an IPv4 proxy still matches 127.0.0.1/32', async () => {
    if (!dualProxied) throw new Error('the dual-stack gateway did not start');
    const a = await as(dualProxied.url, 'local2', '/v1/ping', { host: '127.0.0.1', headers: { 'x-forwarded-for': '127.0.0.2' } });
    expectKeyedSuccess(a);
    expect(a.body.ip).toBe('127.0.0.2');
    // ::1 is not a trusted proxy: its X-Forwarded-For is ignored.
    expectError(await as(dualProxied.url, 'local2', '/v1/ping', { host: '::1', headers: { 'x-forwarded-for': '127.0.0.2' } }), 'ip_not_allowed', { ip: '::1' });
  });

  test('without X-Forwarded-For the peer address is used', async () => {
    const a = await ping('local1', undefined);
    expectKeyedSuccess(a);
    expect(a.body.ip).toBe('127.0.0.1');
  });

  test('X-Forwarded-For from an untrusted peer is ignored', async () => {
    expectError(await ping('local1', '127.0.0.1', '127.0.0.2'), 'ip_not_allowed', { ip: '127.0.0.2' });
    expectError(await ping('far', '203.0.113.9', '127.0.0.2'), 'ip_not_allowed', { ip: '127.0.0.2' });
  });

  test('a garbage X-Forwarded-For never authenticates and never breaks the gateway', async () => {
    // The key is bound to 127.0.0.2, which no garbage value names: each is refused, never served.
    for (const xff of ['not-an-ip', '', ',,,', '999.1.1.1', '127.0.0.2:80', '[::1]']) {
      const body = expectError(await ping('local2', xff), 'ip_not_allowed', { ip: expect.any(String) });
      expect({ xff, ip: body.ip }).not.toEqual({ xff, ip: '127.0.0.2' });
    }
    // And the gateway still serves the real forwarded address afterwards.
    expectKeyedSuccess(await ping('local2', '127.0.0.2'));
  });
});

describe('TRUST_PROXY refuses blanket trust at start-up', () => {
  test.concurrent.each(['true', '1', 'not-a-cidr'])('TRUST_PROXY=%s → exit 1 with one line naming TRUST_PROXY', async (value) => {
    const keysFile = writeKeysFile([key('only', '127.0.0.1')]);
    const result = await runToExit('gateway/main.js', gatewayEnv(keysFile, writeGatewayConfig(), { TRUST_PROXY: value }));
    expect(result.code).toBe(1);
    const lines = result.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain('TRUST_PROXY');
    expect(result.stdout).not.toContain('"listening"');
  });
});

describe('logs', () => {
  test('no gateway log line contains a key value', async () => {
    await expectNoKeyValueLogged(stack);
  });
});
