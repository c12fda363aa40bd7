/**
 * The audit log with the Redis key store: every change through the admin API and the CLI is one
 * entry with the right actor, channel, action and before → after fields; no entry holds a hash or a
 * key value; reading it is paged (`next_cursor`) and filtered by key and time, through
 * `GET /admin/audit` and `keys audit`; retention trims by count and by age.
 */
import Redis from 'ioredis';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { runAs } from '../../gateway/audit/actor';
import { loadGatewayConfig } from '../../gateway/config/gateway-config';
import { createKeyAdmin } from '../../gateway/keys/key-admin';
import { adminCall, readyAdminUrl } from '../kit/admin-api';
import { getWithKey, makeTempDir, removeTempDirs, sha256Hex } from '../kit/gateway-stack';
import { runKeysCli } from '../kit/keys-cli';
import type { RedisServer } from '../kit/redis-server';
import { startRedisStack, type RedisStack } from '../kit/redis-stack';

// Generous: a loaded 2-core machine can take seconds over a hook's default 5 s.
jest.setTimeout(30_000);

const TOKENS = { ada: 'ada-admin-token-for-audit-tests-0123', otto: 'otto-operator-token-for-audit-tests', vera: 'vera-viewer-token-for-audit-tests-01' };
const CLI_ACTOR = `cli:${os.userInfo().username}@${os.hostname()}`;

let redisServer: RedisServer;
let redis: Redis;
let stack: RedisStack;
let adminUrl: string;
/** Every key value handed out in this suite: none may appear in the log. */
const values: string[] = [];

const cli = (args: string[]) => runKeysCli(redisServer.url, args, { GATEWAY_CONFIG: stack.gatewayConfig });

const lastLine = (text: string): string => text.trim().split('\n').pop()!;

/** Every admin answer is checked against openapi/admin.yaml (a departure throws). */
const call = (method: string, url: string, token: string, body?: unknown) => adminCall(adminUrl, token, method, url, body);

interface Entry { id: string; time: string; actor: string; channel: string; action: string; key_id: string; changes: Record<string, { before: unknown; after: unknown }> }

const entriesFor = async (keyId: string): Promise<Entry[]> => (await call('GET', `/admin/audit?key_id=${keyId}&limit=1000`, TOKENS.vera)).body.entries;
const streamLength = (): Promise<number> => redis.xlen('lgw:audit');

beforeAll(async () => {
  const tokensFile = path.join(makeTempDir(), 'operators.yaml');
  fs.writeFileSync(tokensFile, [['ada', 'admin'], ['otto', 'operator'], ['vera', 'viewer']]
    .map(([name, role]) => `- name: ${name}\n  token_sha256: ${sha256Hex(TOKENS[name as keyof typeof TOKENS])}\n  role: ${role}\n`).join(''));
  stack = await startRedisStack({ gateways: [{ ADMIN_PORT: '0', ADMIN_TOKENS_FILE: tokensFile }] });
  ({ redisServer, redis } = stack);
  adminUrl = await readyAdminUrl(stack.gateway, TOKENS.vera);
}, 60_000);

afterAll(async () => {
  await stack?.stop();
  removeTempDirs();
});

describe('each change through the admin API is one entry, attributed to the token name', () => {
  it('create, change, pause, settle, roll, revoke: one entry each with the diff', async () => {
    const before = await streamLength();
    const created = await call('POST', '/admin/keys', TOKENS.ada, { id: 'api-key', tier: 'standard', countries: ['GB'], address: '127.0.0.1' });
    values.push(created.body.key);
    expect((await call('PATCH', '/admin/keys/api-key', TOKENS.otto, { countries: ['GB', 'FR'], per_day: 500 })).status).toBe(200);
    expect((await call('POST', '/admin/keys/api-key/pause', TOKENS.otto, { reason: 'payment_dispute' })).status).toBe(200);
    expect((await call('POST', '/admin/keys/api-key/settle', TOKENS.otto, {})).status).toBe(200);
    const rolled = await call('POST', '/admin/keys/api-key/roll', TOKENS.ada, { grace_seconds: 3600 });
    values.push(rolled.body.key);
    expect((await call('POST', '/admin/keys/api-key/revoke', TOKENS.ada, {})).status).toBe(200);
    // Refused calls change nothing and are not recorded.
    expect((await call('POST', '/admin/keys/api-key/pause', TOKENS.vera, { reason: 'payment_dispute' })).status).toBe(403);
    expect((await call('POST', '/admin/keys/api-key/pause', TOKENS.ada, { reason: 'payment_dispute' })).status).toBe(400); // revoked
    expect(await streamLength()).toBe(before + 6);

    const entries = (await entriesFor('api-key')).reverse(); // oldest first
    expect(entries.map((e) => [e.actor, e.channel, e.action])).toEqual([
      ['ada', 'admin_api', 'create'],
      ['otto', 'admin_api', 'change'],
      ['otto', 'admin_api', 'pause'],
      ['otto', 'admin_api', 'settle'],
      ['ada', 'admin_api', 'roll'],
      ['ada', 'admin_api', 'revoke'],
    ]);
    const [create, change, pause, settle, roll, revoke] = entries.map((e) => e.changes);
    expect(create).toEqual({
      addresses: { before: null, after: ['127.0.0.1'] }, countries: { before: null, after: ['GB'] }, id: { before: null, after: 'api-key' },
      status: { before: null, after: 'active' }, tier: { before: null, after: 'standard' },
    });
    expect(change).toEqual({ countries: { before: ['GB'], after: ['GB', 'FR'] }, limits: { before: null, after: { per_day: 500 } } });
    expect(pause).toEqual({ status: { before: 'active', after: 'paused' }, pause_reasons: { before: null, after: ['payment_dispute'] } });
    expect(settle).toEqual({ status: { before: 'paused', after: 'active' }, pause_reasons: { before: ['payment_dispute'], after: null } });
    expect(Object.keys(roll!)).toEqual(['previous_key_valid_until']);
    expect(roll!.previous_key_valid_until!.before).toBeNull();
    expect(Date.parse(roll!.previous_key_valid_until!.after as string)).toBeGreaterThan(Date.now() + 3500_000);
    expect(revoke).toEqual({ previous_key_valid_until: { before: roll!.previous_key_valid_until!.after, after: null }, status: { before: 'active', after: 'revoked' } });
    for (const e of entries) {
      expect(Math.abs(Date.parse(e.time) - Date.now())).toBeLessThan(60_000);
      expect(Object.keys(e).sort()).toEqual(['action', 'actor', 'changes', 'channel', 'id', 'key_id', 'time']);
    }
  });
});

describe('each change through the CLI is one entry, attributed to cli:<user>@<host>', () => {
  it('create, set, pause, settle, roll, revoke, import', async () => {
    const before = await streamLength();
    const created = await cli(['create', '--id', 'cli-key', '--tier', 'advanced', '--countries', 'DE', '--address', '127.0.0.1']);
    expect(created.code).toBe(0);
    values.push(lastLine(created.stdout));
    expect((await cli(['set', 'cli-key', '--tier', 'standard', '--address', '127.0.0.2'])).code).toBe(0);
    expect((await cli(['pause', 'cli-key', '--reason', 'unpaid_renewal'])).code).toBe(0);
    expect((await cli(['settle', 'cli-key'])).code).toBe(0);
    const rolled = await cli(['roll', 'cli-key', '--grace', '0']);
    values.push(lastLine(rolled.stdout));
    expect((await cli(['revoke', 'cli-key'])).code).toBe(0);
    const importedValue = `imported-${Date.now()}-value-0123456789`;
    values.push(importedValue);
    const file = path.join(makeTempDir(), 'import.yaml');
    fs.writeFileSync(file, `keys:\n  - id: imported-key\n    key_sha256: ${sha256Hex(importedValue)}\n    tier: standard\n    countries: [FR]\n    address: 127.0.0.1\n    status: active\n`);
    expect((await cli(['import', file])).code).toBe(0);
    expect((await cli(['import', file])).code).toBe(0); // the same again: nothing changes, nothing recorded
    expect(await streamLength()).toBe(before + 7);

    const entries = (await entriesFor('cli-key')).reverse();
    expect(entries.map((e) => [e.actor, e.channel, e.action])).toEqual(
      ['create', 'change', 'pause', 'settle', 'roll', 'revoke'].map((action) => [CLI_ACTOR, 'cli', action]),
    );
    // Records hold `addresses` (docs/guarantees.md); `--address` is a list of one.
    expect(entries[1]!.changes).toEqual({ addresses: { before: ['127.0.0.1'], after: ['127.0.0.2'] }, tier: { before: 'advanced', after: 'standard' } });
    expect(entries[4]!.changes).toEqual({}); // roll with no grace: the value changed, no visible field did
    const imported = await entriesFor('imported-key');
    expect(imported.map((e) => [e.actor, e.channel, e.action])).toEqual([[CLI_ACTOR, 'cli', 'import']]);
    // The gateway works with the imported key: the log records the change, not the value.
    expect((await getWithKey(stack.url, '/v1/ping', importedValue)).status).toBe(200);
  });

  it('keys audit [ID] [--since …] prints one line per entry, newest first', async () => {
    const all = await cli(['audit', 'cli-key']);
    expect(all.code).toBe(0);
    const lines = all.stdout.trim().split('\n');
    expect(lines).toHaveLength(6);
    expect(lines[0]).toMatch(new RegExp(`^\\S+Z  ${CLI_ACTOR.replace(/[.]/g, '\\.')} \\(cli\\)  revoke cli-key  status: active → revoked$`));
    expect(lines[5]).toContain('create cli-key');
    const future = await cli(['audit', 'cli-key', '--since', '2999-01-01']);
    expect(future).toMatchObject({ code: 0, stdout: '' });
    const today = new Date().toISOString().slice(0, 10);
    const json = JSON.parse((await cli(['audit', '--since', today, '--limit', '2', '--json'])).stdout) as { entries: Entry[]; next_cursor: string };
    expect(json.entries).toHaveLength(2);
    expect(json.next_cursor).toEqual(expect.any(String));
    const bad = await cli(['audit', '--since', 'yesterday']);
    expect(bad.code).toBe(1);
    expect(bad.stderr.trim()).toBe('keys: since: must be a date (2026-11-24) or an RFC 3339 date-time (2026-11-24T09:30:00Z)');
  });

  it('keys delete ID removes a revoked key only (one line and exit 1 otherwise), and the log records it', async () => {
    for (const [id, words] of [['imported-key', 'revoke it first'], ['no-such-key', 'no-such-key']] as const) {
      const refused = await cli(['delete', id]);
      expect(refused).toMatchObject({ code: 1, stdout: '' });
      expect(refused.stderr.trim().split('\n')).toHaveLength(1);
      expect(refused.stderr).toContain(words);
    }
    expect(await cli(['delete', 'cli-key'])).toMatchObject({ code: 0, stdout: 'deleted key cli-key\n' });
    expect((await cli(['show', 'cli-key'])).code).toBe(1);
    expect((await cli(['show', 'imported-key'])).code).toBe(0);
    const [last] = await entriesFor('cli-key');
    expect([last!.actor, last!.channel, last!.action]).toEqual([CLI_ACTOR, 'cli', 'delete']);
  });
});

describe('reading the log', () => {
  it('pages newest first with next_cursor until null, with no entry twice; key_id and since filter', async () => {
    const everything = (await call('GET', '/admin/audit?limit=1000', TOKENS.vera)).body as { entries: Entry[]; next_cursor: string | null };
    expect(everything.next_cursor).toBeNull();
    expect(everything.entries.length).toBe(await streamLength());
    const times = everything.entries.map((e) => Date.parse(e.time));
    expect([...times].sort((a, b) => b - a)).toEqual(times);

    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const page: { status: number; body: { entries: Entry[]; next_cursor: string | null } } = await call('GET', `/admin/audit?limit=3${cursor ? `&cursor=${cursor}` : ''}`, TOKENS.vera);
      expect(page.status).toBe(200);
      expect(page.body.entries.length).toBeLessThanOrEqual(3);
      seen.push(...page.body.entries.map((e) => e.id));
      cursor = page.body.next_cursor;
      pages++;
    } while (cursor && pages < 100);
    expect(seen).toEqual(everything.entries.map((e) => e.id));

    const filtered = (await call('GET', '/admin/audit?key_id=api-key&limit=2', TOKENS.vera)).body;
    expect(filtered.entries.map((e: Entry) => e.action)).toEqual(['revoke', 'roll']);
    const rest = (await call('GET', `/admin/audit?key_id=api-key&limit=10&cursor=${filtered.next_cursor}`, TOKENS.vera)).body;
    expect(rest.entries.map((e: Entry) => e.action)).toEqual(['settle', 'pause', 'change', 'create']);
    expect(rest.next_cursor).toBeNull();

    const middle = everything.entries[Math.floor(everything.entries.length / 2)]!;
    const since = (await call('GET', `/admin/audit?limit=1000&since=${encodeURIComponent(middle.time)}`, TOKENS.vera)).body.entries as Entry[];
    expect(since.every((e) => Date.parse(e.time) >= Date.parse(middle.time))).toBe(true);
    expect(since.map((e) => e.id)).toEqual(everything.entries.filter((e) => Date.parse(e.time) >= Date.parse(middle.time)).map((e) => e.id));
    expect((await call('GET', '/admin/audit?key_id=no-such-key', TOKENS.vera)).body).toEqual({ entries: [], next_cursor: null });
  });

  it.each([
    ['limit=0', 'limit'], ['limit=1001', 'limit'], ['limit=x', 'limit'], ['since=tomorrow', 'since'], ['cursor=bm90LWEtY3Vyc29y', 'cursor'],
    ['key_id=a%20b', 'key_id'], ['colour=red', 'colour'], ['limit=1&limit=2', 'limit'],
  ])('?%s is 400 invalid_parameter naming %s', async (query, parameter) => {
    const answer = await call('GET', `/admin/audit?${query}`, TOKENS.vera);
    expect(answer.status).toBe(400);
    expect(answer.body).toMatchObject({ error: 'invalid_parameter', parameter });
  });

  it('no entry holds a hash or a key value: the whole stream, raw', async () => {
    const raw = JSON.stringify(await redis.xrange('lgw:audit', '-', '+'));
    expect(raw.length).toBeGreaterThan(500);
    expect(raw).not.toMatch(/[0-9a-fA-F]{64}/);
    for (const v of values) {
      expect(raw).not.toContain(v);
      expect(raw).not.toContain(sha256Hex(v));
    }
    expect(raw).not.toMatch(/plk_/);
  });
});

describe('retention', () => {
  it('keeps at most AUDIT_MAX_ENTRIES and drops entries older than AUDIT_RETENTION_DAYS', async () => {
    // One entry per stream node makes Redis's approximate trimming exact, so the bound is testable.
    await redis.config('SET', 'stream-node-max-entries', '1');
    try {
      const config = loadGatewayConfig(stack.gatewayConfig);
      const small = createKeyAdmin(redis, config, undefined, { maxEntries: 5, days: 400 });
      await runAs({ name: 'retention-test', channel: 'library' }, async () => {
        await small.create({ id: 'retained', tier: 'standard', countries: ['GB'], address: '127.0.0.1' });
        for (let i = 0; i < 8; i++) await small.set('retained', { per_minute: 10 + i });
      });
      expect(await streamLength()).toBe(5);
      const kept = (await call('GET', '/admin/audit?limit=10', TOKENS.vera)).body.entries as Entry[];
      expect(kept.map((e) => e.actor)).toEqual(Array(5).fill('retention-test'));

      // An entry from 2 days ago goes with the next change when retention is one day.
      // (A stream only takes ids above its last one: start a fresh stream holding the old entry.)
      await redis.del('lgw:audit');
      await redis.xadd('lgw:audit', `${Date.now() - 2 * 86_400_000}-0`, 'actor', 'old', 'channel', 'cli', 'action', 'change', 'key_id', 'retained', 'changes', '{}');
      const oneDay = createKeyAdmin(redis, config, undefined, { maxEntries: 1000, days: 1 });
      await runAs({ name: 'retention-test', channel: 'library' }, () => oneDay.set('retained', { per_minute: 99 }));
      const actors = ((await call('GET', '/admin/audit?limit=10', TOKENS.vera)).body.entries as Entry[]).map((e) => e.actor);
      expect(actors).not.toContain('old');
      expect(actors[0]).toBe('retention-test');
    } finally {
      await redis.config('SET', 'stream-node-max-entries', '100');
    }
  });
});
