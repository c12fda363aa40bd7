/**
 * X-Forwarded-For and trusted proxies, at the edges gateway-address.test.ts does not reach (that
 * suite holds: ignored without TRUST_PROXY, honoured from 127.0.0.1/32 with the right-most untrusted
 * address, IPv4-mapped forms, the address matrix on `::` and `127.0.0.1`, `true`/`1`/garbage refused):
 *
 * - a CIDR is exact: a peer just outside it is not trusted, its X-Forwarded-For ignored;
 * - a list of single addresses, chains of several trusted hops, repeated header lines;
 * - an IPv6 trusted proxy on a dual-stack gateway, and an IPv4 peer not trusted by it;
 * - every other spelling of blanket trust refused at start-up.
 */
import {
  expectError,
  expectKeyedSuccess,
  gatewayEnv,
  ipv6LoopbackWorksNow,
  testWithIpv6,
  randomKeyValue,
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
} from '../kit/gateway-stack';

const key = (id: string, address: string): KeySpec => ({ id, value: randomKeyValue(id), tier: 'standard', countries: ['GB'], address, status: 'active' });
const KEYS = [key('at-1', '127.0.0.1'), key('at-2', '127.0.0.2'), key('at-5', '127.0.0.5'), key('at-9', '127.0.0.9'), key('at-v6', '::1')];

let stack: Stack;
let cidr: Proc; // TRUST_PROXY=127.0.0.0/31: 127.0.0.0 and 127.0.0.1 only
let list: Proc; // TRUST_PROXY=127.0.0.1, 127.0.0.3
let dualV6: Proc | undefined; // HOST=::, TRUST_PROXY=::1

beforeAll(async () => {
  const v6 = ipv6LoopbackWorksNow();
  stack = await startStack({ keys: KEYS, gateways: [{ TRUST_PROXY: '127.0.0.0/31' }, { TRUST_PROXY: '127.0.0.1, 127.0.0.3' }] });
  [cidr, list] = stack.gateways as [Proc, Proc];
  if (v6) dualV6 = await stack.startGateway({ HOST: '::', TRUST_PROXY: '::1' });
});
afterAll(async () => {
  await stack?.stop();
});

/** `/v1/ping` as `keyId`, from `localAddress`, with X-Forwarded-For `xff` (an array sends several lines). */
const ping = (gateway: Proc, keyId: string, xff: string | string[] | undefined, options: SendOptions = {}): Promise<Answer> =>
  send(gateway.url, '/v1/ping', { ...options, headers: { 'x-api-key': stack.key(keyId).value, ...(xff === undefined ? {} : { 'x-forwarded-for': xff }) } });

function expectSeenAs(a: Answer, ip: string): void {
  expectKeyedSuccess(a);
  expect(a.body.ip).toBe(ip);
}

describe('TRUST_PROXY=127.0.0.0/31', () => {
  test('a peer inside the CIDR is trusted: its forwarded address is the client', async () => {
    expectSeenAs(await ping(cidr, 'at-5', '127.0.0.5', { localAddress: '127.0.0.1' }), '127.0.0.5');
  });

  test('a peer just outside the CIDR (127.0.0.2) is not: its X-Forwarded-For is ignored', async () => {
    expectError(await ping(cidr, 'at-5', '127.0.0.5', { localAddress: '127.0.0.2' }), 'ip_not_allowed', { ip: '127.0.0.2' });
    expectSeenAs(await ping(cidr, 'at-2', '127.0.0.5', { localAddress: '127.0.0.2' }), '127.0.0.2');
  });

  test('the right-most address outside the CIDR is used; trusted hops are skipped, spoofed left parts ignored', async () => {
    expectSeenAs(await ping(cidr, 'at-5', '203.0.113.9, 127.0.0.5, 127.0.0.1', { localAddress: '127.0.0.1' }), '127.0.0.5');
    expectSeenAs(await ping(cidr, 'at-5', '127.0.0.9, 127.0.0.5, 127.0.0.0, 127.0.0.1', { localAddress: '127.0.0.1' }), '127.0.0.5');
    expectError(await ping(cidr, 'at-9', '127.0.0.9, 127.0.0.5', { localAddress: '127.0.0.1' }), 'ip_not_allowed', { ip: '127.0.0.5' });
  });

  test('X-Forwarded-For on several lines counts as one list, right-most line last', async () => {
    expectSeenAs(await ping(cidr, 'at-5', ['127.0.0.9', '127.0.0.5'], { localAddress: '127.0.0.1' }), '127.0.0.5');
    expectError(await ping(cidr, 'at-9', ['127.0.0.9', '127.0.0.5'], { localAddress: '127.0.0.1' }), 'ip_not_allowed', { ip: '127.0.0.5' });
  });

  test('a chain of trusted addresses only never yields an untrusted client the peer did not name', async () => {
    const a = await ping(cidr, 'at-1', '127.0.0.1, 127.0.0.0', { localAddress: '127.0.0.1' });
    // Served or refused, the address it was judged by is one the chain named (a 403 names it too).
    expect([200, 403]).toContain(a.status);
    if (a.status === 403) expectError(a, 'ip_not_allowed');
    expect(['127.0.0.0', '127.0.0.1']).toContain(a.body.ip);
  });
});

describe('TRUST_PROXY=127.0.0.1, 127.0.0.3 (single addresses)', () => {
  test('each listed peer is trusted, an unlisted one between them is not', async () => {
    expectSeenAs(await ping(list, 'at-5', '127.0.0.5', { localAddress: '127.0.0.1' }), '127.0.0.5');
    expectSeenAs(await ping(list, 'at-5', '127.0.0.5', { localAddress: '127.0.0.3' }), '127.0.0.5');
    expectError(await ping(list, 'at-5', '127.0.0.5', { localAddress: '127.0.0.2' }), 'ip_not_allowed', { ip: '127.0.0.2' });
    expectSeenAs(await ping(list, 'at-5', '127.0.0.5, 127.0.0.3', { localAddress: '127.0.0.1' }), '127.0.0.5');
  });
});

describe('an IPv6 trusted proxy on a dual-stack gateway (HOST=::, TRUST_PROXY=::1)', () => {
  testWithIpv6()('a peer on ::1 is trusted; an IPv4 peer is not', async () => {
    if (!dualV6) throw new Error('the dual-stack gateway did not start');
    expectSeenAs(await ping(dualV6, 'at-5', '127.0.0.5', { host: '::1' }), '127.0.0.5');
    expectSeenAs(await ping(dualV6, 'at-5', '::ffff:127.0.0.5', { host: '::1' }), '127.0.0.5');
    expectError(await ping(dualV6, 'at-5', '127.0.0.5', { host: '127.0.0.1' }), 'ip_not_allowed', { ip: '127.0.0.1' });
    expectSeenAs(await ping(dualV6, 'at-v6', undefined, { host: '::1' }), '::1');
  });
});

describe('blanket trust is refused at start-up, however it is spelt', () => {
  test.concurrent.each(['TRUE', ' true ', 'false', '0', '2', 'loopback', 'uniquelocal', '*', 'all', '127.0.0.1, true'])(
    'TRUST_PROXY=%j → exit 1 with one line naming TRUST_PROXY',
    async (value) => {
      const keysFile = writeKeysFile([KEYS[0]!]);
      const result = await runToExit('gateway/main.js', gatewayEnv(keysFile, writeGatewayConfig(), { TRUST_PROXY: value }));
      expect({ value, code: result.code }).toEqual({ value, code: 1 });
      const lines = result.stderr.trim().split('\n');
      expect(lines).toHaveLength(1);
      expect(lines[0]).toContain('TRUST_PROXY');
      expect(result.stdout).not.toContain('"listening"');
    },
  );
});
