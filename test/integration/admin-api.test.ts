/**
 * The admin API against its document: `GET /admin/openapi.json` without a token, every answer
 * checked against openapi/admin.yaml (adminConformingFetch), the `limits` object on create and
 * update, and paged lists over 10,000 records (API and CLI).
 */
import fs from 'node:fs';
import Redis from 'ioredis';
import YAML from 'yaml';
import { redisKeys } from '../../gateway/keys/redis-layout';
import { adminCall, adminFetch, readyAdminUrl } from '../kit/admin-api';
import { removeTempDirs, writeGatewayConfig } from '../kit/gateway-stack';
import { runKeysCli } from '../kit/keys-cli';
import { ADMIN_DOCUMENT_FILE } from '../kit/openapi-conformance';
import { startRedis, type RedisServer } from '../kit/redis-server';
import { startRedisStack, type RedisStack } from '../kit/redis-stack';

const ADMIN_TOKEN = 'admin-token-for-admin-api-tests-0123';
const MANY = 10_000;

let redisServer: RedisServer;
let redis: Redis;
let stack: RedisStack;
let adminUrl: string;

const admin = (method: string, url: string, body?: unknown) => adminCall(adminUrl, ADMIN_TOKEN, method, url, body);
const cli = (args: string[]) => runKeysCli(redisServer.url, args);

beforeAll(async () => {
  stack = await startRedisStack({ gateways: [{ ADMIN_TOKEN, ADMIN_PORT: '0' }] });
  ({ redisServer, redis } = stack);
  adminUrl = await readyAdminUrl(stack.gateway, ADMIN_TOKEN);
}, 60_000);

afterAll(async () => {
  await stack?.stop();
  removeTempDirs();
});

describe('the admin document', () => {
  it('is served at GET /admin/openapi.json without a token, as openapi/admin.yaml says', async () => {
    const r = await adminFetch(`${adminUrl}/admin/openapi.json`);
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toMatch(/^application\/json/);
    expect(await r.json()).toEqual(YAML.parse(fs.readFileSync(ADMIN_DOCUMENT_FILE, 'utf8')));
    const post = await adminFetch(`${adminUrl}/admin/openapi.json`, { method: 'POST' });
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('GET');
  });

  it('every other path needs the token, also unknown ones (401 before 404)', async () => {
    for (const p of ['/admin/keys', '/admin/keys/x', '/admin/nothing-here']) {
      const r = await adminFetch(`${adminUrl}${p}`);
      expect(r.status).toBe(401);
    }
  });
});

describe('limits on create and update', () => {
  it('take the limits object that reads return; the flat fields stay accepted; one field twice is refused', async () => {
    const created = await admin('POST', '/admin/keys', { id: 'lim-object', tier: 'standard', countries: ['GB'], address: '127.0.0.1', limits: { per_minute: 10 } });
    expect(created.status).toBe(201);
    const shown = await admin('GET', '/admin/keys/lim-object');
    expect(shown.body.limits.per_minute).toBe(10);
    expect(shown.body.limit_overrides).toEqual({ per_minute: 10 });

    // What a read returns can be sent back as it is.
    const roundTrip = await admin('PATCH', '/admin/keys/lim-object', { limits: { ...shown.body.limits, per_day: 500 } });
    expect(roundTrip.status).toBe(200);
    expect(roundTrip.body.limits).toEqual({ ...shown.body.limits, per_day: 500 });

    const flat = await admin('PATCH', '/admin/keys/lim-object', { per_month: 9000 });
    expect(flat.status).toBe(200);
    expect(flat.body.limits.per_month).toBe(9000);
    expect(flat.body.limits.per_day).toBe(500);

    const twice = await admin('PATCH', '/admin/keys/lim-object', { per_minute: 5, limits: { per_minute: 6 } });
    expect(twice.status).toBe(400);
    expect(twice.body).toMatchObject({ error: 'invalid_parameter', parameter: 'per_minute' });
    const unknown = await admin('POST', '/admin/keys', { id: 'lim-bad', tier: 'standard', countries: ['GB'], address: '127.0.0.1', limits: { per_hour: 3 } });
    expect(unknown.status).toBe(400);
    expect(unknown.body).toMatchObject({ error: 'invalid_parameter', parameter: 'limits' });
    const zero = await admin('POST', '/admin/keys', { id: 'lim-bad', tier: 'standard', countries: ['GB'], address: '127.0.0.1', limits: { per_day: 0 } });
    expect(zero.status).toBe(400);
    expect((await admin('GET', '/admin/keys/lim-bad')).status).toBe(404);
  });
});

describe(`paged lists over ${MANY.toLocaleString('en')} records`, () => {
  beforeAll(async () => {
    // Written straight into Redis as the store keeps them (the admin's per-record transaction would
    // make this setup the slowest part of the suite).
    const now = new Date().toISOString();
    const pipeline = redis.pipeline();
    for (let i = 0; i < MANY; i++) {
      const id = `many-${String(i).padStart(5, '0')}`;
      const record = { id, key_sha256: i.toString(16).padStart(64, 'a'), tier: 'standard', countries: ['GB'], address: '127.0.0.1', status: 'active', created_at: now, updated_at: now };
      pipeline.set(redisKeys.record(id), JSON.stringify(record));
      pipeline.set(redisKeys.byHash(record.key_sha256), id);
      pipeline.sadd(redisKeys.ids, id);
    }
    await pipeline.exec();
  }, 60_000);

  async function walk(limit: number | undefined): Promise<{ ids: string[]; pages: number }> {
    const ids: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const query = new URLSearchParams();
      if (limit !== undefined) query.set('limit', String(limit));
      if (cursor !== null) query.set('cursor', cursor);
      const page = await admin('GET', `/admin/keys${query.size ? `?${query}` : ''}`);
      expect(page.status).toBe(200);
      expect(page.body.keys.length).toBeLessThanOrEqual(limit ?? 100);
      ids.push(...page.body.keys.map((k: { id: string }) => k.id));
      cursor = page.body.next_cursor;
      pages++;
    } while (cursor !== null);
    return { ids, pages };
  }

  it('walking the pages lists every record once, whatever the page size', async () => {
    const total = Number(await redis.scard(redisKeys.ids));
    expect(total).toBeGreaterThanOrEqual(MANY);
    for (const limit of [1000, 337, undefined]) {
      const { ids, pages } = await walk(limit);
      expect(new Set(ids).size).toBe(ids.length);
      expect(ids.length).toBe(total);
      expect(ids.filter((id) => id.startsWith('many-'))).toHaveLength(MANY);
      expect(pages).toBeGreaterThanOrEqual(Math.ceil(total / (limit ?? 100)));
    }
  }, 60_000);

  it('a small set is paged too (SSCAN gives it whole; the cursor remembers the place)', async () => {
    // A separate store: three records only.
    const small = await startRedis();
    try {
      const r = new Redis(small.url);
      await r.sadd(redisKeys.ids, 'a', 'b', 'c');
      for (const id of ['a', 'b', 'c']) {
        await r.set(redisKeys.record(id), JSON.stringify({ id, key_sha256: id.repeat(64), tier: 'standard', countries: ['GB'], address: '127.0.0.1', status: 'active', created_at: 'x', updated_at: 'x' }));
      }
      const { createKeyAdmin } = await import('../../gateway/keys/key-admin');
      const { loadGatewayConfig } = await import('../../gateway/config/gateway-config');
      const keyAdmin = createKeyAdmin(r, loadGatewayConfig(writeGatewayConfig()));
      const first = await keyAdmin.list({ limit: 2 });
      expect(first.keys).toHaveLength(2);
      expect(first.next_cursor).not.toBeNull();
      const second = await keyAdmin.list({ limit: 2, cursor: first.next_cursor! });
      expect(second.keys).toHaveLength(1);
      expect(second.next_cursor).toBeNull();
      expect([...first.keys, ...second.keys].map((k) => k.id).sort()).toEqual(['a', 'b', 'c']);
      r.disconnect();
    } finally {
      await small.stop();
    }
  });

  it('refuses a bad limit, a bad cursor, a repeated or unknown parameter with 400 naming it', async () => {
    for (const [query, parameter] of [
      ['limit=0', 'limit'], ['limit=1001', 'limit'], ['limit=ten', 'limit'], ['limit=', 'limit'],
      ['cursor=nope', 'cursor'], ['cursor=', 'cursor'], ['limit=5&limit=6', 'limit'], ['page=2', 'page'],
    ] as const) {
      const r = await admin('GET', `/admin/keys?${query}`);
      expect(r.status).toBe(400);
      expect(r.body).toMatchObject({ error: 'invalid_parameter', parameter });
    }
  });

  it('keys list (CLI) prints every record, read page by page; --limit gives one page', async () => {
    const all = await cli(['list']);
    expect(all.code).toBe(0);
    const listed = JSON.parse(all.stdout) as Array<{ id: string }>;
    expect(new Set(listed.map((k) => k.id)).size).toBe(Number(await redis.scard(redisKeys.ids)));
    const page = await cli(['list', '--limit', '3']);
    expect(page.code).toBe(0);
    const parsed = JSON.parse(page.stdout) as { keys: unknown[]; next_cursor: string };
    expect(parsed.keys).toHaveLength(3);
    const next = await cli(['list', '--limit', '3', '--cursor', parsed.next_cursor]);
    expect((JSON.parse(next.stdout) as { keys: Array<{ id: string }> }).keys).toHaveLength(3);
    const bad = await cli(['list', '--limit', '0']);
    expect(bad.code).toBe(1);
    expect(bad.stderr.trim().split('\n')).toHaveLength(1);
    expect(bad.stderr).toMatch(/limit/);
  }, 30_000);
});
