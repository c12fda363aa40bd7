/**
 * Subscription requests (docs/portal.md) on two gateway instances sharing one real redis-server:
 * a holder's request for a country, approved through the admin API, makes the same key answer 200
 * for that country on both instances; an upgrade approved with the CLI makes /v1/insights answer
 * as for an Advanced key; a decline changes nothing; deciding twice is 409; roles; audit;
 * `subscription.*` and `key.changed` webhooks with their data; a failed approval stays pending.
 */
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import Redis from 'ioredis';
import { stringify } from 'yaml';
import { fixtureListings } from '../fixtures/listings';
import { adminCall, readyAdminUrl } from '../kit/admin-api';
import { runKeysCli } from '../kit/keys-cli';
import {
  cursorSecret, DEFAULT_TIERS, getWithKey, makeTempDir, removeTempDirs, sha256Hex, startBackend, startGateway, startStub, writeKeysFile, writeListingsFile, writeTempFile,
  type Proc, type Stub,
} from '../kit/gateway-stack';
import { startRedis, type RedisServer } from '../kit/redis-server';
import { runAs } from '../../gateway/audit/actor';
import { loadGatewayConfig } from '../../gateway/config/gateway-config';
import { createKeyAdmin } from '../../gateway/keys/key-admin';
import { createRedisHolderStores } from '../../gateway/requests/holder-stores';
import { createKeyEventSink } from '../../gateway/webhooks/key-events';
import { webhookKeys } from '../../gateway/webhooks/redis-webhook-queue';

jest.setTimeout(60_000);

const TOKENS = { viewer: 'viewer-token-for-requests-0123456789', operator: 'operator-token-for-requests-0123456789', admin: 'admin-token-for-requests-0123456789' };
const NAMES = { viewer: 'vera', operator: 'otto', admin: 'ada' };
const WEBHOOK_SECRET = `whsec_${randomBytes(32).toString('base64')}`;

interface Event { type: string; data: Record<string, unknown> }
const events: Event[] = [];
const receiver = http.createServer((req, res) => {
  let body = '';
  req.on('data', (c: Buffer) => (body += c));
  req.on('end', () => {
    events.push(JSON.parse(body) as Event);
    res.writeHead(204).end();
  });
});

let redisServer: RedisServer;
let redis: Redis;
let backend: Proc;
let insights: Stub;
let gateways: Proc[] = [];
let adminUrl: string;
let gatewayConfig: string;
let holders: ReturnType<typeof createRedisHolderStores>;
let keyValue: string;

const call = (method: string, url: string, token: string, body?: unknown) => adminCall(adminUrl, token, method, url, body);
const cli = (...args: string[]) => runKeysCli(redisServer.url, args, { GATEWAY_CONFIG: gatewayConfig });
const urls = (): string[] => gateways.map((g) => g.url);

async function until<T>(what: string, probe: () => Promise<T | undefined | false> | T | undefined | false, ms = 20_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`not within ${ms} ms: ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** Polls `path` on every instance until each answers `status`; the ms it took after `since`. */
async function answeredByAll(path: string, status: number, since: number, timeoutMs = 10_000): Promise<number> {
  await Promise.all(urls().map((url) => until(`${url}${path} → ${status}`, async () => (await getWithKey(url, path, keyValue)).status === status, timeoutMs)));
  return Date.now() - since;
}

/**
 * Runs `decide` while polling `path` on every instance; the ms from the key store's change message
 * (published when the approval changed the key) until the slowest instance answered `status`.
 */
async function propagation(path: string, status: number, decide: () => Promise<unknown>): Promise<number> {
  const subscriber = new Redis(redisServer.url);
  await subscriber.subscribe('lgw:keys:changed');
  let publishedAt: number | undefined;
  subscriber.once('message', () => (publishedAt = Date.now()));
  const deadline = Date.now() + 10_000;
  const seenAt = urls().map(async (url) => {
    while (Date.now() < deadline) {
      if ((await getWithKey(url, path, keyValue)).status === status) return Date.now();
      await new Promise((r) => setTimeout(r, 10));
    }
    return Infinity;
  });
  await decide();
  const seen = await Promise.all(seenAt);
  subscriber.disconnect();
  expect(publishedAt).toBeDefined();
  const slowest = Math.max(...seen) - publishedAt!;
  propagationTimes.push(slowest);
  return slowest;
}
const propagationTimes: number[] = [];
afterAll(() => {
  process.stdout.write(`approval propagation, slowest of 2 instances (ms): ${propagationTimes.join(', ')}\n`);
});

beforeAll(async () => {
  redisServer = await startRedis();
  redis = new Redis(redisServer.url);
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  insights = await startStub((_req, res) => {
    res.setHeader('content-type', 'application/json');
    res.end('{"market":"steady"}');
  });
  backend = await startBackend(writeListingsFile(fixtureListings()));
  const dir = makeTempDir();
  const tokensFile = path.join(dir, 'operators.yaml');
  fs.writeFileSync(tokensFile, (Object.keys(TOKENS) as Array<keyof typeof TOKENS>).map((role) => `- name: ${NAMES[role]}\n  token_sha256: ${sha256Hex(TOKENS[role])}\n  role: ${role}\n`).join(''));
  gatewayConfig = writeTempFile('gateway.yaml', stringify({ tiers: DEFAULT_TIERS, insights: { upstream: insights.url } }), dir);
  const env = {
    REDIS_URL: redisServer.url, KEY_STORE: 'redis', REDIS_COMMAND_TIMEOUT_MS: '3000',
    WEBHOOK_URL: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`, WEBHOOK_SECRET, WEBHOOK_POLL_MS: '100',
  };
  const secret = cursorSecret();
  const keysFile = writeKeysFile([], dir);
  gateways = await Promise.all([
    startGateway({ backendUrl: backend.url, keysFile, gatewayConfig, cursorSecret: secret, env: { ...env, ADMIN_PORT: '0', ADMIN_TOKENS_FILE: tokensFile } }),
    startGateway({ backendUrl: backend.url, keysFile, gatewayConfig, cursorSecret: secret, env }),
  ]);
  adminUrl = await readyAdminUrl(gateways[0]!, TOKENS.viewer);
  await until('the webhook delivery marker', async () => (await redis.exists(webhookKeys.on)) === 1);
  // The portal's side, in this process: the same stores over the same Redis.
  const keyAdmin = createKeyAdmin(redis as never, loadGatewayConfig(gatewayConfig), undefined, undefined, createKeyEventSink(redis as never));
  holders = createRedisHolderStores(redis as never, keyAdmin, { events: createKeyEventSink(redis as never) });
  expect((await call('POST', '/admin/accounts', TOKENS.admin, { id: 'acme', name: 'Acme', emails: ['ops@acme.example'] })).status).toBe(201);
  const created = await call('POST', '/admin/keys', TOKENS.admin, { id: 'acme-key', tier: 'standard', countries: ['GB'], address: '127.0.0.1', account: 'acme' });
  expect(created.status).toBe(201);
  keyValue = created.body.key;
});

afterAll(async () => {
  await Promise.all(gateways.map((g) => g.stop()));
  await backend?.stop();
  await insights?.close();
  redis?.disconnect();
  receiver.closeAllConnections();
  await new Promise((r) => receiver.close(r));
  await redisServer?.stop();
  removeTempDirs();
});

const holder = <T>(work: () => Promise<T>): Promise<T> => runAs({ name: 'holder:acme:ops@acme.example', channel: 'portal' }, work);

describe('a country request', () => {
  let requestId: string;

  test('a request is pending, listed by /admin/requests?status=pending, and sent as subscription.requested', async () => {
    await answeredByAll('/v1/properties?country=DE', 403, Date.now());
    const request = await holder(() => holders.requests.create({ keyId: 'acme-key', accountId: 'acme', change: { countries: ['de'] } }));
    requestId = request.id;
    expect(request).toMatchObject({ status: 'pending', change: { countries: ['DE'] }, decidedAt: null, decidedBy: null });
    const listed = await call('GET', '/admin/requests?status=pending', TOKENS.viewer);
    expect(listed.status).toBe(200);
    expect(listed.body.requests).toContainEqual({
      id: requestId, key_id: 'acme-key', account_id: 'acme', change: { countries: ['DE'] }, status: 'pending', created_at: request.createdAt, decided_at: null, decided_by: null,
    });
    const event = await until('subscription.requested', () => events.find((e) => e.type === 'subscription.requested' && e.data.request_id === requestId));
    expect(event.data).toEqual({ request_id: requestId, key_id: 'acme-key', account_id: 'acme', change: { countries: ['DE'] } });
  });

  test('approving needs operator; approval makes the same key answer 200 for DE on both instances; twice is 409', async () => {
    const refused = await call('POST', `/admin/requests/${requestId}/approve`, TOKENS.viewer);
    expect(refused.status).toBe(403);
    let approved: Awaited<ReturnType<typeof call>> | undefined;
    const took = await propagation('/v1/properties?country=DE', 200, async () => {
      approved = await call('POST', `/admin/requests/${requestId}/approve`, TOKENS.operator);
    });
    expect(approved!.status).toBe(200);
    expect(approved!.body).toMatchObject({ id: requestId, status: 'approved', decided_by: 'otto' });
    expect(Date.parse(approved!.body.decided_at)).not.toBeNaN();
    // From the change message to the slowest instance's 200, one listing request's round trip
    // included (the data service answers it): the change itself reaches the instances as every key
    // change does (redis-shared.test.ts holds that to one second, with /v1/ping).
    expect(took).toBeLessThan(2000);
    expect((await getWithKey(gateways[1]!.url, '/v1/properties?country=GB', keyValue)).status).toBe(200);
    const again = await call('POST', `/admin/requests/${requestId}/approve`, TOKENS.operator);
    expect(again.status).toBe(409);
    expect(again.body.error).toBe('conflict');
    expect((await call('POST', `/admin/requests/${requestId}/decline`, TOKENS.operator)).status).toBe(409);
    expect((await call('GET', '/admin/keys/acme-key', TOKENS.viewer)).body.countries).toEqual(['GB', 'DE']);
    expect((await call('GET', '/admin/requests?status=pending', TOKENS.viewer)).body.requests.map((r: { id: string }) => r.id)).not.toContain(requestId);
  });

  test('audited (the key change and the decision, by the operator) and sent as key.changed and subscription.approved', async () => {
    const audit = (await call('GET', '/admin/audit?limit=20', TOKENS.viewer)).body.entries as Array<Record<string, any>>;
    expect(audit.find((e) => e.action === 'change' && e.key_id === 'acme-key')).toMatchObject({ actor: 'otto', channel: 'admin_api', changes: { countries: { before: ['GB'], after: ['GB', 'DE'] } } });
    expect(audit.find((e) => e.action === 'request.approve')).toMatchObject({ actor: 'otto', key_id: 'acme-key', account_id: 'acme' });
    expect(audit.find((e) => e.action === 'request.create')).toMatchObject({ actor: 'holder:acme:ops@acme.example', channel: 'portal', account_id: 'acme' });
    const approved = await until('subscription.approved', () => events.find((e) => e.type === 'subscription.approved' && e.data.request_id === requestId));
    expect(approved.data).toEqual({ request_id: requestId, key_id: 'acme-key', account_id: 'acme', change: { countries: ['DE'] } });
    await until('key.changed', () => events.find((e) => e.type === 'key.changed' && e.data.key_id === 'acme-key' && JSON.stringify(e.data.countries) === '["GB","DE"]'));
  });
});

describe('an upgrade request', () => {
  test('approved with `keys approve`, /v1/insights answers as for an Advanced key on both instances', async () => {
    for (const url of urls()) {
      const before = await getWithKey(url, '/v1/insights/market', keyValue);
      expect(before.status).toBe(403);
      expect(before.body.error).toBe('upgrade_required');
    }
    const request = await holder(() => holders.requests.create({ keyId: 'acme-key', accountId: 'acme', change: { tier: 'advanced' } }));
    const listed = JSON.parse((await cli('requests', '--status', 'pending')).stdout);
    expect(listed.requests.map((r: { id: string }) => r.id)).toEqual([request.id]);
    let approved: Awaited<ReturnType<typeof cli>> | undefined;
    expect(await propagation('/v1/insights/market', 200, async () => {
      approved = await cli('approve', request.id);
    })).toBeLessThan(2000);
    expect(approved!.code).toBe(0);
    expect(JSON.parse(approved!.stdout)).toMatchObject({ status: 'approved', decided_by: expect.stringMatching(/^cli:/) });
    expect((await call('GET', '/admin/keys/acme-key', TOKENS.viewer)).body.tier).toBe('advanced');
    const twice = await cli('approve', request.id);
    expect(twice.code).toBe(1);
    expect(twice.stderr).toContain('already approved');
  });
});

describe('a declined request', () => {
  test('changes nothing; listed as declined; sent as subscription.declined', async () => {
    const request = await holder(() => holders.requests.create({ keyId: 'acme-key', accountId: 'acme', change: { countries: ['FR'] } }));
    const declined = await cli('decline', request.id);
    expect(declined.code).toBe(0);
    expect(JSON.parse(declined.stdout).status).toBe('declined');
    expect((await call('GET', '/admin/keys/acme-key', TOKENS.viewer)).body.countries).toEqual(['GB', 'DE']);
    const listed = await call('GET', '/admin/requests?status=declined', TOKENS.viewer);
    expect(listed.body.requests.map((r: { id: string }) => r.id)).toEqual([request.id]);
    await until('subscription.declined', () => events.find((e) => e.type === 'subscription.declined' && e.data.request_id === request.id));
  });

  test('bad queries and unknown ids are catalogued errors', async () => {
    expect((await call('GET', '/admin/requests?status=maybe', TOKENS.viewer)).body).toMatchObject({ error: 'invalid_parameter', parameter: 'status' });
    expect((await call('GET', '/admin/requests?colour=red', TOKENS.viewer)).body).toMatchObject({ error: 'invalid_parameter', parameter: 'colour' });
    expect((await call('GET', '/admin/requests?cursor=forged', TOKENS.viewer)).body).toMatchObject({ error: 'invalid_parameter', parameter: 'cursor' });
    expect((await call('POST', '/admin/requests/req-0000000000000-AAAAAAAA/approve', TOKENS.operator)).status).toBe(404);
    await expect(holders.requests.create({ keyId: 'acme-key', accountId: 'acme', change: { tier: 'platinum' } as never })).rejects.toMatchObject({ code: 'invalid_parameter' });
  });
});

describe('an approval that cannot apply', () => {
  test('stays pending (the key is gone) and answers the key admin\'s 404', async () => {
    const created = await call('POST', '/admin/keys', TOKENS.admin, { id: 'doomed', tier: 'standard', countries: ['GB'], address: '127.0.0.1', account: 'acme' });
    expect(created.status).toBe(201);
    const request = await holder(() => holders.requests.create({ keyId: 'doomed', accountId: 'acme', change: { countries: ['FR'] } }));
    expect((await call('POST', '/admin/keys/doomed/revoke', TOKENS.admin)).status).toBe(200);
    expect((await call('DELETE', '/admin/keys/doomed', TOKENS.admin)).status).toBe(204);
    expect((await call('POST', `/admin/requests/${request.id}/approve`, TOKENS.operator)).status).toBe(404);
    expect((await call('GET', `/admin/requests/${request.id}`, TOKENS.viewer)).body.status).toBe('pending');
  });

  test('a key moved to another account since the request is not changed (409), the request stays pending', async () => {
    expect((await call('POST', '/admin/accounts', TOKENS.admin, { id: 'other', name: 'Other', emails: ['x@other.example'] })).status).toBe(201);
    expect((await call('POST', '/admin/keys', TOKENS.admin, { id: 'moved', tier: 'standard', countries: ['GB'], address: '127.0.0.1', account: 'acme' })).status).toBe(201);
    const request = await holder(() => holders.requests.create({ keyId: 'moved', accountId: 'acme', change: { tier: 'advanced' } }));
    // Moving a key into another account is an admin's act (roles by effect).
    expect((await call('PATCH', '/admin/keys/moved', TOKENS.admin, { account: 'other' })).status).toBe(200);
    const refused = await call('POST', `/admin/requests/${request.id}/approve`, TOKENS.operator);
    expect(refused.status).toBe(409);
    expect(refused.body.message).toContain('no longer belongs');
    expect((await call('GET', '/admin/keys/moved', TOKENS.viewer)).body.tier).toBe('standard');
    expect((await call('POST', `/admin/requests/${request.id}/decline`, TOKENS.operator)).body.status).toBe('declined');
  });

  test('paging: newest first, next_cursor until the last page', async () => {
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: Awaited<ReturnType<typeof call>> = await call('GET', `/admin/requests?limit=2${cursor ? `&cursor=${cursor}` : ''}`, TOKENS.viewer);
      seen.push(...page.body.requests.map((r: { id: string }) => r.id));
      cursor = page.body.next_cursor;
    } while (cursor);
    expect(seen).toHaveLength(5);
    expect(seen).toEqual([...seen].sort().reverse());
  });
});
