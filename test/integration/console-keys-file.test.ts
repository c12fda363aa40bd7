/**
 * The console with the keys file as the store: the admin listener serves the console alone,
 * read-only, saying where the keys come from; use now is read from the instance's counters; each
 * reload that changes records is in the audit log (in memory), one entry per record; the admin API's
 * paths are not served; posts are refused.
 */
import fs from 'node:fs';
import path from 'node:path';
import { getWithKey, keysFileText, randomKeyValue, removeTempDirs, sha256Hex, startStack, UNLIMITED, type KeySpec, type Stack } from '../kit/gateway-stack';
import { announcedUrl } from '../kit/log-lines';

// Generous: a loaded 2-core machine can take seconds over a hook's default 5 s.
jest.setTimeout(30_000);

const TOKEN = 'viewer-token-for-the-keys-file-console';
const keys: KeySpec[] = [
  { id: 'file-one', value: randomKeyValue('one'), tier: 'standard', countries: ['GB'], address: '127.0.0.1', status: 'active', limits: { per_day: 40 } },
  { id: 'file-two', value: randomKeyValue('two'), tier: 'advanced', countries: ['FR'], address: '127.0.0.1', status: 'active', limits: UNLIMITED },
];

let stack: Stack;
let adminUrl: string;
let cookie = '';
let csrf = '';

const page = async (url: string): Promise<{ status: number; text: string }> => {
  const res = await fetch(`${adminUrl}${url}`, { headers: { cookie }, redirect: 'manual' });
  return { status: res.status, text: await res.text() };
};

beforeAll(async () => {
  const dir = fs.mkdtempSync(path.join(require('node:os').tmpdir(), 'gw-console-file-'));
  const tokensFile = path.join(dir, 'operators.yaml');
  fs.writeFileSync(tokensFile, `- name: amy\n  token_sha256: ${sha256Hex(TOKEN)}\n  role: admin\n`);
  stack = await startStack({ keys, gateways: [{ ADMIN_PORT: '0', ADMIN_TOKENS_FILE: tokensFile }] });
  adminUrl = await announcedUrl(stack.gateway, 'admin api listening');
  const signIn = await fetch(`${adminUrl}/console/sign-in`, {
    method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: `token=${TOKEN}`,
  });
  expect(signIn.status).toBe(303);
  cookie = signIn.headers.get('set-cookie')!.split(';')[0]!;
  csrf = /name="_csrf" value="([^"]+)"/.exec((await page('/console/keys')).text)![1]!;
}, 60_000);

afterAll(async () => {
  await stack?.stop();
  removeTempDirs();
});

describe('the console over the keys file', () => {
  it('answers every page, the sign-in page and an error page with its security headers: CSP, never framed, nosniff, not cached', async () => {
    const { CONSOLE_CSP } = await import('../../gateway/console/console-app');
    for (const url of ['/console/sign-in', '/console/keys', '/console/keys/no-such-key']) {
      const res = await fetch(`${adminUrl}${url}`, { headers: { cookie }, redirect: 'manual' });
      expect(res.headers.get('content-security-policy')).toBe(CONSOLE_CSP);
      expect(CONSOLE_CSP).toContain("frame-ancestors 'none'");
      expect(res.headers.get('x-frame-options')).toBe('DENY');
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
      expect(res.headers.get('cache-control')).toBe('no-store');
    }
  });

  it('is read-only and says where the keys come from; even an admin gets no action', async () => {
    const list = await page('/console/keys');
    expect(list.status).toBe(200);
    expect(list.text).toContain(`Keys come from the keys file ${stack.keysFile}. This console is read-only`);
    expect(list.text).toContain('data-key-id="file-one"');
    expect(list.text).not.toContain('Create a key');
    const one = await page('/console/keys/file-one');
    expect(one.text).toContain('Read-only: keys come from the keys file');
    expect(one.text).not.toMatch(/<form[^>]+action="\/console\/keys\/file-one/);
    for (const action of ['pause', 'revoke', 'roll', 'settle', 'set']) {
      const post = await fetch(`${adminUrl}/console/keys/file-one/${action}`, {
        method: 'POST', redirect: 'manual', headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' }, body: `_csrf=${csrf}&reason=unpaid_renewal&grace_seconds=0`,
      });
      expect({ action, status: post.status }).toEqual({ action, status: 403 });
    }
    expect((await page('/console/keys/file-one/confirm/revoke')).status).toBe(403);
    const api = await fetch(`${adminUrl}/admin/keys`, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(api.status).toBe(404);
    expect(((await api.json()) as { error: string }).error).toBe('not_found');
  });

  it('shows use now from the counters', async () => {
    for (let i = 0; i < 3; i++) expect((await getWithKey(stack.url, '/v1/ping', keys[0]!.value)).status).toBe(200);
    const one = await page('/console/keys?q=file-one');
    expect(one.text).toMatch(/<progress max="40" value="3"[^>]*data-window="day"/);
  });

  it('audits each reload that changes records: one entry per record added, changed or removed', async () => {
    const three: KeySpec = { id: 'file-three', value: randomKeyValue('three'), tier: 'standard', countries: ['DE'], address: '127.0.0.1', status: 'active' };
    fs.writeFileSync(stack.keysFile, keysFileText([{ ...keys[0]!, status: 'paused', pause_reason: 'unpaid_renewal' }, three]));
    const deadline = Date.now() + 10_000;
    let audit = '';
    while (Date.now() < deadline) {
      audit = (await page('/console/audit')).text;
      if ((audit.match(/data-audit-id=/g) ?? []).length >= 3) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    const rows = [...audit.matchAll(/<tr data-audit-id="[^"]+">([\s\S]*?)<\/tr>/g)].map((m) => m[1]!.replace(/<[^>]+>/g, ' ').replace(/\s+/g, ' ').trim());
    expect(rows).toHaveLength(3);
    const actor = `file:${stack.keysFile}`;
    expect(rows.find((r) => r.includes('file_change'))).toContain(`${actor} keys_file file_change file-one`);
    expect(rows.find((r) => r.includes('file_change'))).toContain('status: active → paused');
    expect(rows.find((r) => r.includes('file_add'))).toContain('file_add file-three');
    expect(rows.find((r) => r.includes('file_remove'))).toContain('file_remove file-two');
    for (const k of [...keys, three]) {
      expect(audit).not.toContain(k.value);
      expect(audit).not.toContain(sha256Hex(k.value));
    }
    expect((await getWithKey(stack.url, '/v1/ping', keys[0]!.value)).body.error).toBe('key_paused');
  });
});
