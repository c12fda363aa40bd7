import express from 'express';
import pino from 'pino';
import { createMemoryAuditLog } from '../../gateway/audit/memory-audit-log';
import { diffRecords } from '../../gateway/audit/audit-entry';
import { html, raw } from '../../gateway/console/html';
import { createConsoleRouter } from '../../gateway/console/console-app';
import type { ConsoleStore } from '../../gateway/console/console-store';
import type { KeyAdmin } from '../../gateway/keys/key-admin';
import { csrfMatches } from '../../gateway/console/csrf';
import { createMemorySessionStore } from '../../gateway/console/sessions';
import { createOperatorRegistry } from '../../gateway/operators/operator-tokens';

describe('html', () => {
  it('escapes every value unless it is itself html', () => {
    const id = `"><script>alert('x')</script>&`;
    expect(html`<a title="${id}">${id}</a>${html`<b>${id}</b>`}${raw('<i>ok</i>')}`.text).toBe(
      '<a title="&quot;&gt;&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;&amp;">&quot;&gt;&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;&amp;</a>'
      + '<b>&quot;&gt;&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;&amp;</b><i>ok</i>',
    );
    expect(html`${[1, 'a<', null, undefined, false]}`.text).toBe('1a&lt;');
  });
});

describe('console sessions', () => {
  it('expire after their lifetime, end on demand, and check CSRF tokens exactly', () => {
    let now = 1_000_000;
    const store = createMemorySessionStore(60_000, () => now);
    const s = store.create('ada', Buffer.alloc(32));
    expect(s.id).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(store.get(s.id)).toBe(s);
    expect(csrfMatches(s, s.csrf)).toBe(true);
    expect(csrfMatches(s, `${s.csrf}x`)).toBe(false);
    expect(csrfMatches(s, undefined)).toBe(false);
    expect(csrfMatches(s, [s.csrf])).toBe(false);
    now += 60_000;
    expect(store.get(s.id)).toBeUndefined();
    const t = store.create('ada', Buffer.alloc(32));
    store.end(t.id);
    expect(store.get(t.id)).toBeUndefined();
  });
});

describe('the in-memory audit log (the Redis stream\'s twin)', () => {
  const actor = { name: 'amy', channel: 'keys_file' } as const;
  it('pages newest first with next_cursor, filters by key, and caps its size', async () => {
    const log = createMemoryAuditLog(5);
    for (let i = 0; i < 7; i++) log.append(actor, 'file_change', i % 2 ? 'odd' : 'even', { n: { before: i, after: i + 1 } });
    expect(log.size).toBe(5);
    const first = await log.read({ limit: 2 });
    expect(first.entries.map((e) => e.changes.n!.before)).toEqual([6, 5]);
    const second = await log.read({ limit: 2, cursor: first.next_cursor! });
    expect(second.entries.map((e) => e.changes.n!.before)).toEqual([4, 3]);
    const third = await log.read({ limit: 2, cursor: second.next_cursor! });
    expect(third).toMatchObject({ entries: [{ changes: { n: { before: 2 } } }], next_cursor: null });
    expect((await log.read({ limit: 10, keyId: 'odd' })).entries.map((e) => e.changes.n!.before)).toEqual([5, 3]);
    expect((await log.read({ limit: 10, sinceMs: Date.now() + 60_000 })).entries).toEqual([]);
    await expect(log.read({ limit: 2, cursor: 'garbage!' })).rejects.toMatchObject({ code: 'invalid_parameter', extras: { parameter: 'cursor' } });
  });

  it('diffs never carry a hash, and show a roll as a time', () => {
    const before = { id: 'k', key_sha256: 'a'.repeat(64), tier: 'standard', created_at: 'x', updated_at: 'y' };
    const after = { ...before, key_sha256: 'b'.repeat(64), previous_key_sha256: 'a'.repeat(64), previous_expires_at: Date.UTC(2030, 0, 1), updated_at: 'z' };
    expect(diffRecords(before, after)).toEqual({ previous_key_valid_until: { before: null, after: '2030-01-01T00:00:00.000Z' } });
  });
});

describe('the console\'s guards and error pages', () => {
  const TOKEN = 'console-error-pages-admin-token-0123';
  const logged: Array<{ level: number; msg: string; err?: unknown }> = [];
  let base = '';
  let cookie = '';
  let server: import('node:http').Server;
  const settled: string[] = [];

  beforeAll(async () => {
    const closed = (): never => {
      throw new Error('Connection is closed.');
    };
    // Reads fail as with Redis away; the one write used here (settle) is recorded.
    const admin = { settle: async (id: string) => void settled.push(id) } as unknown as KeyAdmin;
    const store: ConsoleStore = { source: 'a stub store', admin, page: async () => closed(), show: async () => closed(), usage: async () => closed(), readAudit: async () => ({ entries: [], next_cursor: null }) };
    const logger = pino({ level: 'info' }, { write: (line: string) => void logged.push(JSON.parse(line)) });
    const app = express();
    app.use('/console', createConsoleRouter({ store, operators: createOperatorRegistry(TOKEN), sessions: createMemorySessionStore(60_000), sessionTtlMs: 60_000, logger }));
    server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    base = `http://127.0.0.1:${(server.address() as import('node:net').AddressInfo).port}/console`;
    const signIn = await fetch(`${base}/sign-in`, { method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: `token=${TOKEN}` });
    cookie = signIn.headers.get('set-cookie')!.split(';')[0]!;
  });
  afterAll(() => new Promise((resolve) => server.close(resolve)));

  it('a post needs the session\'s CSRF token and this origin; sign-in from another origin is refused', async () => {
    const csrf = /name="_csrf" value="([^"]+)"/.exec(await (await fetch(`${base}/keys/new`, { headers: { cookie } })).text())![1]!;
    const settle = (body: string, headers: Record<string, string> = {}) => fetch(`${base}/keys/k1/settle`, {
      method: 'POST', redirect: 'manual', headers: { cookie, 'content-type': 'application/x-www-form-urlencoded', ...headers }, body,
    });
    const refused = {
      noToken: (await settle('')).status,
      wrongToken: (await settle(`_csrf=${csrf}x`)).status,
      twoTokens: (await settle(`_csrf=${csrf}&_csrf=${csrf}`)).status,
      otherOrigin: (await settle(`_csrf=${csrf}`, { origin: 'http://evil.example' })).status,
    };
    expect(refused).toEqual({ noToken: 403, wrongToken: 403, twoTokens: 403, otherOrigin: 403 });
    expect(settled).toEqual([]);
    const done = await settle(`_csrf=${encodeURIComponent(csrf)}`, { origin: new URL(base).origin });
    expect([done.status, done.headers.get('location')]).toEqual([303, '/console/keys/k1?done=settled']);
    expect(settled).toEqual(['k1']);
    const signIn = await fetch(`${base}/sign-in`, {
      method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded', origin: 'http://evil.example' }, body: `token=${TOKEN}`,
    });
    expect(signIn.status).toBe(403);
    expect(signIn.headers.get('set-cookie')).toBeNull();
  });

  it('a form or path it cannot read is a 4xx page, Redis away a 503 page: never a 500 or a logged stack', async () => {
    const form = (headers: Record<string, string>) => fetch(`${base}/sign-in`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers }, body: 'token=x' });
    const answers = {
      charset: await form({ 'content-type': 'application/x-www-form-urlencoded; charset=koi8-r' }),
      encoding: await form({ 'content-encoding': 'bogus' }),
      path: await fetch(`${base}/keys/%E0%A4%A`, { headers: { cookie } }),
      unknownAction: await fetch(`${base}/keys/k1/confirm/explode`, { headers: { cookie } }),
      redisAway: await fetch(`${base}/keys`, { headers: { cookie } }),
    };
    expect(Object.fromEntries(Object.entries(answers).map(([k, r]) => [k, r.status]))).toEqual({ charset: 400, encoding: 400, path: 404, unknownAction: 404, redisAway: 503 });
    expect(answers.redisAway.headers.get('retry-after')).toBe('1');
    const page = await answers.charset.text();
    expect(page).toContain('invalid_parameter');
    expect(page).not.toMatch(/at \w+ \(/);
    expect(logged.filter((l) => l.level >= 50)).toEqual([]);
  });
});
