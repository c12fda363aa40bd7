/**
 * Credentials and TLS on a real redis-server: `requirepass`, ACL users, and a TLS-only server whose
 * certificate is signed by a CA made with openssl for this run. The right configuration counts in
 * Redis; a wrong password, a missing permission or an untrusted certificate stops start-up with one
 * line naming the variable, and a password changed under a running gateway makes it refuse (503,
 * /readyz not ready) instead of counting per instance. No password appears in any output.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import Redis from 'ioredis';
import {
  awayFromMinuteEdge, expectError, getWithKey, gatewayEnv, randomKeyValue, runToExit, send, startStack, writeGatewayConfig, writeKeysFile,
  type KeySpec, type Stack,
} from '../kit/gateway-stack';
import { announcedUrl, waitForLine } from '../kit/log-lines';
import { redisCli, startPasswordRedis, startSentinelSet, startTlsRedis, type SecuredRedis, type SentinelSet } from '../kit/redis-topologies';
import { runKeysCliWith } from '../kit/keys-cli';

jest.setTimeout(60_000);

const PASSWORD = `pw-${randomBytes(12).toString('hex')}`;
const USER_PASSWORD = `user-${randomBytes(12).toString('hex')}`;
const WRONG = `wrong-${randomBytes(12).toString('hex')}`;
const SECRETS = [PASSWORD, USER_PASSWORD, WRONG];

const key: KeySpec = { id: 'cred-key', value: randomKeyValue('cred'), tier: 'standard', countries: ['GB'], address: '127.0.0.1', status: 'active', limits: { per_minute: 1000 } };

let auth: SecuredRedis;
let tls: Awaited<ReturnType<typeof startTlsRedis>>;
const stacks: Stack[] = [];

beforeAll(async () => {
  [auth, tls] = await Promise.all([
    startPasswordRedis(PASSWORD, [
      // The permissions docs/operating.md names for the gateway's user, exactly.
      ['gw', 'on', `>${USER_PASSWORD}`, '~lgw:*', '&lgw:*', '+@read', '+@write', '+@scripting', '+@pubsub', '+@connection', '+info'],
      // Everything but running scripts: the counters cannot work.
      ['noscript', 'on', `>${USER_PASSWORD}`, '~*', '&*', '+@all', '-@scripting'],
    ]),
    startTlsRedis(PASSWORD),
  ]);
});

afterAll(async () => {
  await Promise.all(stacks.map((s) => s.stop()));
  await Promise.all([auth?.stop(), tls?.stop()]);
});

const files = (): { keysFile: string; gatewayConfig: string } => ({ keysFile: writeKeysFile([key]), gatewayConfig: writeGatewayConfig() });

/** Asserts a start-up refusal: exit 1, exactly one stderr line naming `variable` and `code`, no secret anywhere. */
async function expectRefusedAtStartup(env: Record<string, string>, variable: string, code: RegExp): Promise<string> {
  const { keysFile, gatewayConfig } = files();
  const result = await runToExit('gateway/main.js', gatewayEnv(keysFile, gatewayConfig, env), 20_000);
  expect(result.code).toBe(1);
  const lines = result.stderr.trim().split('\n');
  expect(lines).toHaveLength(1);
  expect(lines[0]).toContain(variable);
  expect(lines[0]).toMatch(code);
  for (const secret of SECRETS) expect(`${result.stdout}${result.stderr}`).not.toContain(secret);
  return lines[0]!;
}

async function gatewayOn(env: Record<string, string>): Promise<Stack> {
  const stack = await startStack({ keys: [key], gateways: [{ OPS_PORT: '0', ...env }] });
  stacks.push(stack);
  return stack;
}

/** The per-minute counter of the key in Redis, read as `client` sees it. */
async function minuteCount(client: Redis): Promise<number> {
  const names = await client.keys(`lgw:{${key.id}}:minute:*`);
  return names.length ? Number(await client.get(names[0]!)) : 0;
}

const cli = (args: string[], env: Record<string, string>) => runKeysCliWith({ KEY_STORE: 'redis', ...env }, args);

describe('requirepass and ACL users', () => {
  it('the password in REDIS_URL counts in Redis; a wrong or missing one is refused at start-up with one line and no secret', async () => {
    await awayFromMinuteEdge();
    const stack = await gatewayOn({ REDIS_URL: `redis://:${PASSWORD}@127.0.0.1:${auth.node.port}` });
    const client = new Redis({ port: auth.node.port, password: PASSWORD });
    try {
      const before = await minuteCount(client);
      for (let i = 0; i < 3; i++) expect((await getWithKey(stack.url, '/v1/ping', key.value)).status).toBe(200);
      expect(await minuteCount(client)).toBe(before + 3);
    } finally {
      client.disconnect();
    }
    await expectRefusedAtStartup({ REDIS_URL: `redis://:${WRONG}@127.0.0.1:${auth.node.port}` }, 'REDIS_URL', /WRONGPASS/);
    await expectRefusedAtStartup({ REDIS_URL: `redis://127.0.0.1:${auth.node.port}` }, 'REDIS_URL', /NOAUTH/);
    for (const secret of SECRETS) expect(stack.gatewayOutput().join('\n')).not.toContain(secret);
  });

  it('an ACL user in the URL works, the Redis key store included; a user without permission to run scripts is refused (NOPERM), and so is the CLI with a wrong password', async () => {
    const url = `redis://gw:${USER_PASSWORD}@127.0.0.1:${auth.node.port}`;
    const stack = await gatewayOn({ REDIS_URL: url });
    expect((await getWithKey(stack.url, '/v1/ping', key.value)).status).toBe(200);
    // The key store, its change channel, usage history and the CLI's writes (with their audit entry) as that user.
    const storeStack = await gatewayOn({ REDIS_URL: url, KEY_STORE: 'redis' });
    const created = await cli(['create', '--id', 'acl-key', '--tier', 'standard', '--countries', 'GB', '--address', '127.0.0.1'], { REDIS_URL: url, GATEWAY_CONFIG: storeStack.gatewayConfig });
    expect({ code: created.code, stderr: created.stderr }).toEqual({ code: 0, stderr: '' });
    const value = created.stdout.trim().split('\n').pop()!;
    expect((await getWithKey(storeStack.url, '/v1/ping', value)).status).toBe(200);
    expect((await cli(['pause', 'acl-key', '--reason', 'unpaid_renewal'], { REDIS_URL: url, GATEWAY_CONFIG: storeStack.gatewayConfig })).code).toBe(0);
    let paused = await getWithKey(storeStack.url, '/v1/ping', value);
    for (const deadline = Date.now() + 5000; paused.status !== 403 && Date.now() < deadline; ) paused = await getWithKey(storeStack.url, '/v1/ping', value);
    expectError(paused, 'key_paused');
    expect(storeStack.gatewayOutput().filter((l) => /NOPERM|redis_refused/.test(l))).toEqual([]);
    await expectRefusedAtStartup({ REDIS_URL: `redis://noscript:${USER_PASSWORD}@127.0.0.1:${auth.node.port}` }, 'REDIS_URL', /NOPERM/);
    const refused = await cli(['list'], { REDIS_URL: `redis://gw:${WRONG}@127.0.0.1:${auth.node.port}` });
    expect(refused.code).toBe(1);
    expect(refused.stderr.trim().split('\n')).toHaveLength(1);
    expect(refused.stderr).toMatch(/REDIS_URL.*WRONGPASS/);
    for (const secret of SECRETS) expect(refused.stdout + refused.stderr).not.toContain(secret);
  });

  it('credentials changed under a running gateway: error log, /readyz refused, 503 with Retry-After, never per-instance counting; back when they work again', async () => {
    await awayFromMinuteEdge(15_000);
    const stack = await gatewayOn({ REDIS_URL: `redis://gw:${USER_PASSWORD}@127.0.0.1:${auth.node.port}` });
    const ops = await announcedUrl(stack.gateway, 'ops listening');
    expect((await getWithKey(stack.url, '/v1/ping', key.value)).status).toBe(200);
    const admin = ['--no-auth-warning', '-a', PASSWORD];
    await redisCli(auth.node.port, ...admin, 'acl', 'setuser', 'gw', 'resetpass', `>${WRONG}`);
    await redisCli(auth.node.port, ...admin, 'client', 'kill', 'user', 'gw');
    try {
      let ready = await send(ops, '/readyz');
      for (const deadline = Date.now() + 10_000; ready.body?.checks?.redis !== 'refused' && Date.now() < deadline; ) ready = await send(ops, '/readyz');
      expect(ready.status).toBe(503);
      expect(ready.body).toMatchObject({ ready: false, checks: { redis: 'refused' }, counting: 'refused' });
      const client = new Redis({ port: auth.node.port, password: PASSWORD });
      const before = await minuteCount(client);
      for (let i = 0; i < 3; i++) expectError(await getWithKey(stack.url, '/v1/ping', key.value), 'service_unavailable');
      expect(await minuteCount(client)).toBe(before);
      client.disconnect();
      await waitForLine(stack.gateway, '"reason":"redis_refused"');
    } finally {
      await redisCli(auth.node.port, ...admin, 'acl', 'setuser', 'gw', 'resetpass', `>${USER_PASSWORD}`);
    }
    let again = await getWithKey(stack.url, '/v1/ping', key.value);
    for (const deadline = Date.now() + 10_000; again.status !== 200 && Date.now() < deadline; ) {
      await new Promise((r) => setTimeout(r, 100));
      again = await getWithKey(stack.url, '/v1/ping', key.value);
    }
    expect(again.status).toBe(200);
    expect((await send(ops, '/readyz')).body).toMatchObject({ checks: { redis: 'ok' }, counting: 'shared' });
    const output = stack.gatewayOutput().join('\n');
    for (const secret of SECRETS) expect(output).not.toContain(secret);
  });
});

describe('Sentinel with REDIS_PASSWORD (the data nodes require it)', () => {
  let set: SentinelSet;
  beforeAll(async () => {
    set = await startSentinelSet({ password: PASSWORD });
  }, 60_000);
  afterAll(async () => {
    await set?.stop();
  });
  const sentinelEnv = (): Record<string, string> => ({ REDIS_SENTINELS: set.sentinelList, REDIS_SENTINEL_MASTER: set.masterName });

  it('the right password counts in Redis; a wrong or missing one is refused at start-up with one line naming REDIS_PASSWORD, no secret', async () => {
    await awayFromMinuteEdge();
    const stack = await gatewayOn({ ...sentinelEnv(), REDIS_PASSWORD: PASSWORD });
    const client = new Redis({ port: set.master.port, password: PASSWORD });
    try {
      const before = await minuteCount(client);
      for (let i = 0; i < 2; i++) expect((await getWithKey(stack.url, '/v1/ping', key.value)).status).toBe(200);
      expect(await minuteCount(client)).toBe(before + 2);
    } finally {
      client.disconnect();
    }
    await expectRefusedAtStartup({ ...sentinelEnv(), REDIS_PASSWORD: WRONG }, 'REDIS_PASSWORD', /WRONGPASS/);
    await expectRefusedAtStartup(sentinelEnv(), 'REDIS_PASSWORD', /NOAUTH/);
  });
});

describe('TLS', () => {
  it('rediss:// with the CA that signed the server counts in Redis over TLS', async () => {
    await awayFromMinuteEdge();
    const stack = await gatewayOn({ REDIS_URL: `rediss://:${PASSWORD}@127.0.0.1:${tls.node.port}`, REDIS_TLS_CA_FILE: tls.certificates.caFile });
    const client = new Redis({ port: tls.node.port, password: PASSWORD, tls: { ca: fs.readFileSync(tls.certificates.caFile) } });
    try {
      const before = await minuteCount(client);
      for (let i = 0; i < 2; i++) expect((await getWithKey(stack.url, '/v1/ping', key.value)).status).toBe(200);
      expect(await minuteCount(client)).toBe(before + 2);
    } finally {
      client.disconnect();
    }
  });

  it('a certificate not signed by REDIS_TLS_CA_FILE (or the system CAs) is refused at start-up with one line', async () => {
    await expectRefusedAtStartup({ REDIS_URL: `rediss://:${PASSWORD}@127.0.0.1:${tls.node.port}`, REDIS_TLS_CA_FILE: tls.certificates.otherCaFile }, 'REDIS_TLS_CA_FILE', /not trusted/);
    await expectRefusedAtStartup({ REDIS_URL: `rediss://:${PASSWORD}@127.0.0.1:${tls.node.port}` }, 'REDIS_URL', /not trusted/);
  });
});
