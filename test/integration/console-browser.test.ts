/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
/**
 * The operator console in a real browser: Debian's Chromium driven by playwright-core, against two
 * real gateways sharing a real redis-server, every request that is not loopback blocked. An admin
 * signs in, creates a key and copies its value from the page, pauses it (every instance refuses it
 * within a second), settles, rolls (both values work through the grace), revokes; the usage bars
 * show a burst; a viewer sees no action and its forged posts are refused; an operator sees only its
 * actions; sign-out ends the session. No script error, no CSP violation, no request off loopback,
 * and axe-core finds no serious or critical violation on any page. This suite writes no file: the
 * pictures in docs/ (README.md, docs/operating.md) are written by `npm run docs:screenshots` (scripts/docs-screenshots.ts).
 *
 * There is no skip: without Chromium this suite fails (`apt-get install chromium`).
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { budget, eventually, getWithKey, makeTempDir, removeTempDirs, sha256Hex, type Proc } from '../kit/gateway-stack';
import { announcedUrl } from '../kit/log-lines';
import { startRedisStack, type RedisStack } from '../kit/redis-stack';

const CHROMIUM = (() => {
  try {
    return execFileSync('sh', ['-c', 'command -v chromium'], { encoding: 'utf8' }).trim();
  } catch {
    return '';
  }
})();
const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync'];
const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]']);
const AXE_SOURCE = fs.readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');

jest.setTimeout(budget(60_000));

const TOKENS = { ada: 'ada-console-admin-token-0123456789', otto: 'otto-console-operator-token-0123', vera: 'vera-console-viewer-token-012345' };
const ROLES = { ada: 'admin', otto: 'operator', vera: 'viewer' } as const;

let stack: RedisStack;
let gateways: Proc[] = [];
let adminUrl: string;
let browser: Browser;
const problems = { blocked: [] as string[], pageErrors: [] as string[], consoleErrors: [] as string[], csp: [] as string[] };
const axeFindings: string[] = [];

async function newSession(): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: adminUrl });
  await context.route('**/*', (route) => {
    const url = new URL(route.request().url());
    if ((url.protocol === 'http:' || url.protocol === 'https:') && LOOPBACK_HOSTS.has(url.hostname)) return route.continue();
    problems.blocked.push(url.href);
    return route.abort('blockedbyclient');
  });
  // Installed through the DevTools protocol, so the page's CSP does not apply to it.
  await context.exposeBinding('reportCspViolation', (_source, text: string) => problems.csp.push(text));
  await context.addInitScript(() => {
    document.addEventListener('securitypolicyviolation', (e: SecurityPolicyViolationEvent) => {
      (window as unknown as { reportCspViolation(t: string): void }).reportCspViolation(`${e.violatedDirective} ${e.blockedURI}`);
    });
  });
  const page = await context.newPage();
  page.on('pageerror', (err) => problems.pageErrors.push(err.message));
  page.on('console', (msg) => {
    if (msg.type() === 'error') problems.consoleErrors.push(msg.text());
  });
  return { context, page };
}

/** axe-core from node_modules, evaluated through the DevTools protocol (not a script tag: the CSP forbids inline script). */
async function checkAccessibility(page: Page, label: string): Promise<void> {
  await page.evaluate(AXE_SOURCE);
  const violations = await page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run(ctx: Document, o: object): Promise<{ violations: Array<{ id: string; impact: string; nodes: unknown[] }> }> } }).axe;
    const result = await axe.run(document, { resultTypes: ['violations'] });
    return result.violations.map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.length }));
  });
  for (const v of violations) if (v.impact === 'serious' || v.impact === 'critical') axeFindings.push(`${label}: ${v.id} (${v.impact}, ${v.nodes} nodes)`);
}

async function signIn(page: Page, who: keyof typeof TOKENS): Promise<void> {
  await page.goto(`${adminUrl}/console`);
  await page.waitForURL(`${adminUrl}/console/sign-in`);
  await page.getByLabel('Operator token').fill(TOKENS[who]);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL(`${adminUrl}/console/keys`);
}

/** Polls every gateway until each answers `status` (and `error`) for `value`; returns the time taken (ms). */
async function seenEverywhere(value: string, status: number, error?: string, timeoutMs = 5_000): Promise<number> {
  const started = Date.now();
  let last = '';
  await eventually(`${status} ${error ?? ''} on every gateway`, async () => {
    const answers = await Promise.all(gateways.map((g) => getWithKey(g.url, '/v1/ping', value)));
    last = answers.map((a) => `${a.status} ${a.body?.error ?? ''}`).join(', ');
    return answers.every((a) => a.status === status && (error === undefined || a.body?.error === error));
  }, { timeoutMs, intervalMs: 20 }).catch((err: Error) => {
    throw new Error(`not seen everywhere: ${last} (${err.message})`);
  });
  return Date.now() - started;
}

const adminApi = async (method: string, url: string, body?: unknown): Promise<any> => {
  const res = await fetch(`${adminUrl}${url}`, {
    method, headers: { authorization: `Bearer ${TOKENS.ada}`, 'content-type': 'application/json' }, ...(body ? { body: JSON.stringify(body) } : {}),
  });
  return res.json();
};

beforeAll(async () => {
  if (!CHROMIUM) throw new Error('Chromium is required (apt-get install -y chromium)');
  const dir = makeTempDir();
  const tokensFile = path.join(dir, 'operators.yaml');
  fs.writeFileSync(tokensFile, (Object.keys(TOKENS) as Array<keyof typeof TOKENS>)
    .map((name) => `- name: ${name}\n  token_sha256: ${sha256Hex(TOKENS[name])}\n  role: ${ROLES[name]}\n`).join(''));
  stack = await startRedisStack({
    env: { REDIS_COMMAND_TIMEOUT_MS: '3000', USAGE_FLUSH_MS: '200' },
    gateways: [{ ADMIN_PORT: '0', ADMIN_TOKENS_FILE: tokensFile }, {}],
  });
  gateways = stack.gateways;
  adminUrl = await announcedUrl(gateways[0]!, 'admin api listening');
  browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS });
}, budget(60_000));

afterAll(async () => {
  await browser?.close();
  await stack?.stop();
  removeTempDirs();
});

describe('an admin in the console', () => {
  let page: Page;
  let context: BrowserContext;
  let firstValue = '';
  let secondValue = '';

  beforeAll(async () => {
    ({ context, page } = await newSession());
  });
  afterAll(() => context?.close());

  test('signs in with an operator token; the session cookie is HttpOnly, SameSite=Strict, expiring, for /console only', async () => {
    await page.goto(`${adminUrl}/console/keys`);
    await page.waitForURL(`${adminUrl}/console/sign-in`);
    await checkAccessibility(page, 'sign-in');
    await page.getByLabel('Operator token').fill('not-a-token-at-all-0123456789');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect(page.getByRole('alert').innerText()).resolves.toContain('not recognised');
    await signIn(page, 'ada');
    const cookies = await context.cookies(`${adminUrl}/console/keys`);
    expect(cookies).toHaveLength(1);
    expect(cookies[0]).toMatchObject({ name: 'lgw_console', httpOnly: true, sameSite: 'Strict', path: '/console' });
    expect(cookies[0]!.expires).toBeGreaterThan(Date.now() / 1000);
    expect(cookies[0]!.expires).toBeLessThan(Date.now() / 1000 + 24 * 3600);
    await expect(page.locator('header .who').innerText()).resolves.toBe('ada (admin)');
    await checkAccessibility(page, 'keys (empty)');
  });

  test('creates a key; its value is shown once with a warning, copied with the button, and works on every gateway', async () => {
    await page.getByRole('link', { name: 'Create a key' }).click();
    await checkAccessibility(page, 'create');
    await page.getByLabel('Key id').fill('browser-key');
    await page.getByLabel('Countries').fill('GB, FR');
    await page.getByLabel('Address').fill('127.0.0.1');
    await page.getByLabel('Per day').fill('60');
    await page.getByRole('button', { name: 'Create the key' }).click();
    await expect(page.getByRole('alert').innerText()).resolves.toContain('will not be shown again');
    await checkAccessibility(page, 'created');
    await page.getByRole('button', { name: 'Copy the value' }).click();
    // The clipboard write is asynchronous: wait for the page to say it is done.
    await page.locator('#copy-status', { hasText: 'Copied to the clipboard.' }).waitFor({ timeout: 10_000 });
    firstValue = await page.evaluate(() => navigator.clipboard.readText());
    expect(firstValue).toMatch(/^plk_[0-9A-Za-z]{49}$/);
    expect(firstValue).toBe((await page.locator('#key-value').innerText()).trim());
    await seenEverywhere(firstValue, 200);
    // Shown once: the key's own page never carries the value.
    await page.getByRole('link', { name: 'Go to the key' }).click();
    expect(await page.content()).not.toContain(firstValue);
  });

  test('pauses it after a confirmation: 403 key_paused on every gateway within one second; settles it', async () => {
    await page.getByRole('link', { name: 'Pause…' }).click();
    await checkAccessibility(page, 'confirm pause');
    await page.getByLabel('Reason').selectOption('payment_dispute');
    const posted = page.waitForResponse((r) => r.url().endsWith('/console/keys/browser-key/pause'));
    await page.getByRole('button', { name: 'Pause the key' }).click();
    await posted;
    // Within one second (the contract's figure, scaled by the load measured now).
    const oneSecond = budget(1_000);
    const ms = await seenEverywhere(firstValue, 403, 'key_paused', 1_000);
    expect(ms).toBeLessThanOrEqual(oneSecond);
    await expect(page.locator('#key-state').innerText()).resolves.toBe('paused');
    await checkAccessibility(page, 'key (paused)');
    await page.getByRole('button', { name: 'Settle (resume)' }).click();
    await expect(page.locator('#key-state').innerText()).resolves.toBe('active');
    await seenEverywhere(firstValue, 200);
  });

  test('rolls it: the new value is shown once, and both values work through the grace on every gateway', async () => {
    await page.getByRole('link', { name: 'Roll the value…' }).click();
    await checkAccessibility(page, 'confirm roll');
    await page.getByLabel(/Grace period/).fill('3600');
    await page.getByRole('button', { name: 'Roll the value' }).click();
    await expect(page.getByRole('alert').innerText()).resolves.toContain('will not be shown again');
    await page.getByRole('button', { name: 'Copy the value' }).click();
    // The clipboard write is asynchronous: wait for the page to say it is done.
    await page.locator('#copy-status', { hasText: 'Copied to the clipboard.' }).waitFor({ timeout: 10_000 });
    secondValue = await page.evaluate(() => navigator.clipboard.readText());
    expect(secondValue).toMatch(/^plk_/);
    expect(secondValue).not.toBe(firstValue);
    await seenEverywhere(secondValue, 200);
    await seenEverywhere(firstValue, 200);
  });

  test('the usage bars show what a burst of requests used', async () => {
    const before = (await adminApi('GET', '/admin/keys/browser-key/usage')).windows.find((w: { window: string }) => w.window === 'day').used as number;
    const burst = await Promise.all(Array.from({ length: 9 }, (_, i) => getWithKey(gateways[i % 2]!.url, '/v1/ping', i % 3 ? secondValue : firstValue)));
    expect(burst.map((a) => a.status)).toEqual(Array(9).fill(200));
    await page.goto(`${adminUrl}/console/keys?q=browser`);
    const row = page.locator('tr[data-key-id="browser-key"]');
    const day = row.locator('progress[data-window="day"]');
    expect(Number(await day.getAttribute('value'))).toBe(before + 9);
    expect(await day.getAttribute('max')).toBe('60');
    expect(Number(await row.locator('progress[data-window="month"]').getAttribute('value'))).toBe(before + 9);
    await expect(row.innerText()).resolves.toContain(`${before + 9} / 60`);
    // The key's page shows today's history once the gateways have written it: every answer was a 200,
    // so today's accepted count is the day counter.
    const used = before + 9;
    let accepted = -1;
    for (let i = 0; i < 100 && accepted !== used; i++) {
      await page.goto(`${adminUrl}/console/keys/browser-key`);
      accepted = Number(await page.locator(`#usage-history tr[data-date="${new Date().toISOString().slice(0, 10)}"] td[data-accepted]`).getAttribute('data-accepted'));
      if (accepted !== used) await new Promise((r) => setTimeout(r, 100));
    }
    expect(accepted).toBe(used);
    await expect(page.locator('#usage-history tbody tr').count()).resolves.toBe(14);
    // A few more keys, in other states, for the picture in the docs.
    for (const [id, tier, countries, perDay] of [['acme-uk', 'advanced', ['GB'], 40], ['bistro-fr', 'standard', ['FR', 'BE'], 30], ['charter-de', 'standard', ['DE'], 100]] as const) {
      const { key } = await adminApi('POST', '/admin/keys', { id, tier, countries, address: '127.0.0.1', per_day: perDay });
      for (let i = 0; i < perDay / 3; i++) await getWithKey(gateways[0]!.url, '/v1/ping', key);
    }
    await adminApi('POST', '/admin/keys/bistro-fr/pause', { reason: 'unpaid_renewal' });
    await page.goto(`${adminUrl}/console/keys`);
    await checkAccessibility(page, 'keys');
    // Filters: by state, tier and country.
    await page.goto(`${adminUrl}/console/keys?state=revoked`);
    await expect(page.locator('tr[data-key-id]').count()).resolves.toBe(0);
    await page.goto(`${adminUrl}/console/keys?tier=standard&country=fr`);
    await expect(page.locator('tr[data-key-id]').count()).resolves.toBe(2);
    await page.goto(`${adminUrl}/console/keys?state=paused`);
    await expect(page.locator('tr[data-key-id]').evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-key-id')))).resolves.toEqual(['bistro-fr']);
  });

  test('revokes it after a confirmation: neither value works anywhere', async () => {
    await page.goto(`${adminUrl}/console/keys/browser-key`);
    await page.getByRole('link', { name: 'Revoke…' }).click();
    await checkAccessibility(page, 'confirm revoke');
    await page.getByRole('button', { name: 'Revoke the key' }).click();
    await expect(page.locator('#key-state').innerText()).resolves.toBe('revoked');
    await seenEverywhere(firstValue, 401, 'unauthenticated');
    await seenEverywhere(secondValue, 401, 'unauthenticated');
    await expect(page.getByRole('link', { name: 'Revoke…' }).count()).resolves.toBe(0);
  });

  test('the audit log has one entry per action, as ada through the console, and no value', async () => {
    const api = (await adminApi('GET', '/admin/audit?key_id=browser-key')).entries as Array<{ actor: string; channel: string; action: string }>;
    expect(api.map((e) => `${e.actor} ${e.channel} ${e.action}`).reverse()).toEqual(
      ['create', 'pause', 'settle', 'roll', 'revoke'].map((a) => `ada console ${a}`),
    );
    await page.goto(`${adminUrl}/console/audit`);
    await page.getByLabel('Key id').fill('browser-key');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.waitForURL(/key_id=browser-key/);
    const rows = await page.locator('tr[data-audit-id]').evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll('td')].slice(1, 4).map((td) => td.textContent?.trim())));
    expect(rows).toEqual(['revoke', 'roll', 'settle', 'pause', 'create'].map((a) => ['ada', 'console', a]));
    await expect(page.locator('tr[data-audit-id]').first().innerText()).resolves.toContain('status: active → revoked');
    const text = await page.content();
    expect(text).not.toContain(firstValue);
    expect(text).not.toContain(sha256Hex(firstValue));
    await checkAccessibility(page, 'audit');
    await page.goto(`${adminUrl}/console/audit?since=tomorrow`);
    await expect(page.getByRole('alert').innerText()).resolves.toContain('since');
  });

  test('the monthly report shows each key\'s accepted requests, and downloads as CSV', async () => {
    const monthUsed = (await adminApi('GET', '/admin/keys/browser-key/usage')).windows.find((w: { window: string }) => w.window === 'month').used as number;
    let accepted = -1;
    for (let i = 0; i < 100 && accepted !== monthUsed; i++) {
      await page.goto(`${adminUrl}/console/keys`);
      await page.getByRole('link', { name: 'Monthly report' }).click();
      accepted = Number(await page.locator('#monthly-report tr[data-key-id="browser-key"] td[data-accepted]').getAttribute('data-accepted').catch(() => '-1'));
      if (accepted !== monthUsed) await new Promise((r) => setTimeout(r, 100));
    }
    expect(accepted).toBe(monthUsed);
    await checkAccessibility(page, 'monthly report');
    const csv = await page.request.get(`${adminUrl}/console/reports/monthly.csv?month=${new Date().toISOString().slice(0, 7)}`);
    expect(csv.status()).toBe(200);
    expect(csv.headers()['content-type']).toMatch(/^text\/csv/);
    const lines = (await csv.text()).trim().split('\r\n');
    expect(lines[0]).toMatch(/^key_id,accepted,/);
    const header = lines[0]!.split(',');
    const row = lines.find((l) => l.startsWith('browser-key,'))!.split(',');
    expect(row[1]).toBe(String(monthUsed));
    // Polling for the pause on both gateways met key_paused at least once on each.
    expect(Number(row[header.indexOf('refused_key_paused')])).toBeGreaterThanOrEqual(2);
    await page.goto(`${adminUrl}/console/reports/monthly?month=2026-13`);
    await expect(page.getByRole('alert').innerText()).resolves.toContain('month');
  });

  test('sign-out ends the session: the old cookie no longer opens a page or posts', async () => {
    const [cookie] = await context.cookies(`${adminUrl}/console/keys`);
    const csrf = await page.locator('header form input[name="_csrf"]').getAttribute('value');
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL(`${adminUrl}/console/sign-in`);
    const replayed = await fetch(`${adminUrl}/console/keys`, { headers: { cookie: `lgw_console=${cookie!.value}` }, redirect: 'manual' });
    expect(replayed.status).toBe(303);
    expect(replayed.headers.get('location')).toBe('/console/sign-in');
    const post = await fetch(`${adminUrl}/console/keys/browser-key/settle`, {
      method: 'POST', redirect: 'manual',
      headers: { cookie: `lgw_console=${cookie!.value}`, 'content-type': 'application/x-www-form-urlencoded' }, body: `_csrf=${csrf}`,
    });
    expect(post.status).toBe(401);
  });
});

describe('roles in the console', () => {
  beforeAll(async () => {
    await adminApi('POST', '/admin/keys', { id: 'role-key', tier: 'advanced', countries: ['DE'], address: '127.0.0.1' });
  });

  test('a viewer sees no action, and its forged posts are refused and change nothing', async () => {
    const { context, page } = await newSession();
    try {
      await signIn(page, 'vera');
      await expect(page.getByRole('link', { name: 'Create a key' }).count()).resolves.toBe(0);
      await page.goto(`${adminUrl}/console/keys/role-key`);
      await checkAccessibility(page, 'key (viewer)');
      await expect(page.locator('main form').count()).resolves.toBe(0);
      await expect(page.locator('main button, main a.button').count()).resolves.toBe(0);
      await expect(page.locator('main').innerText()).resolves.toContain('reads only');
      const csrf = await page.locator('header form input[name="_csrf"]').getAttribute('value');
      const forge = (url: string, body: string) => page.request.post(`${adminUrl}${url}`, {
        headers: { 'content-type': 'application/x-www-form-urlencoded' }, data: body, maxRedirects: 0,
      });
      for (const [url, body] of [
        ['/console/keys/role-key/pause', `_csrf=${csrf}&reason=unpaid_renewal`],
        ['/console/keys/role-key/revoke', `_csrf=${csrf}`],
        ['/console/keys/role-key/set', `_csrf=${csrf}&tier=standard`],
        ['/console/keys', `_csrf=${csrf}&id=vera-made&tier=standard&countries=GB&address=127.0.0.1`],
        ['/console/keys/role-key/pause', 'reason=unpaid_renewal'], // no CSRF token at all
      ] as const) {
        const answer = await forge(url, body);
        expect({ url, status: answer.status() }).toEqual({ url, status: 403 });
        expect(await answer.text()).toContain('forbidden');
      }
      expect((await page.request.get(`${adminUrl}/console/keys/role-key/confirm/revoke`)).status()).toBe(403);
      expect(await adminApi('GET', '/admin/keys/role-key')).toMatchObject({ status: 'active', tier: 'advanced' });
      expect((await adminApi('GET', '/admin/keys/vera-made')).error).toBe('not_found');
      const entries = (await adminApi('GET', '/admin/audit?limit=1000')).entries as Array<{ actor: string }>;
      expect(entries.filter((e) => e.actor === 'vera')).toEqual([]);
    } finally {
      await context.close();
    }
  });

  test('an operator pauses, settles and edits, and sees no create, roll or revoke', async () => {
    const { context, page } = await newSession();
    try {
      await signIn(page, 'otto');
      await expect(page.getByRole('link', { name: 'Create a key' }).count()).resolves.toBe(0);
      await page.goto(`${adminUrl}/console/keys/role-key`);
      await expect(page.getByRole('link', { name: 'Roll the value…' }).count()).resolves.toBe(0);
      await expect(page.getByRole('link', { name: 'Revoke…' }).count()).resolves.toBe(0);
      await page.getByLabel(/^Countries/).fill('DE, AT');
      await page.getByRole('button', { name: 'Save changes' }).click();
      await expect(page.getByRole('status').innerText()).resolves.toContain('changed');
      await page.getByRole('link', { name: 'Pause…' }).click();
      await page.getByRole('button', { name: 'Pause the key' }).click();
      await expect(page.locator('#key-state').innerText()).resolves.toBe('paused');
      const csrf = await page.locator('header form input[name="_csrf"]').getAttribute('value');
      const forged = await page.request.post(`${adminUrl}/console/keys/role-key/revoke`, {
        headers: { 'content-type': 'application/x-www-form-urlencoded' }, data: `_csrf=${csrf}`, maxRedirects: 0,
      });
      expect(forged.status()).toBe(403);
      const entries = ((await adminApi('GET', '/admin/audit?key_id=role-key')).entries as Array<{ actor: string; channel: string; action: string; changes: object }>).reverse();
      expect(entries.map((e) => `${e.actor} ${e.channel} ${e.action}`)).toEqual(['ada admin_api create', 'otto console change', 'otto console pause']);
      expect(entries[1]!.changes).toEqual({ countries: { before: ['DE'], after: ['DE', 'AT'] } });
    } finally {
      await context.close();
    }
  });
});

describe('what the browser saw', () => {
  test('the CSP is enforced and its violations are caught (an injected inline script does not run)', async () => {
    const { context, page } = await newSession();
    try {
      await page.goto(`${adminUrl}/console/sign-in`);
      const ran = await page.evaluate(() => {
        const s = document.createElement('script');
        s.textContent = 'window.inlineRan = true';
        document.body.append(s);
        return (window as unknown as { inlineRan?: boolean }).inlineRan === true;
      });
      expect(ran).toBe(false);
      for (let i = 0; i < 100 && problems.csp.length === 0; i++) await new Promise((r) => setTimeout(r, 50));
      expect(problems.csp.length).toBeGreaterThan(0);
      problems.csp.splice(0);
      problems.consoleErrors.splice(0); // Chromium also logs the refusal
    } finally {
      await context.close();
    }
  });

  test('no request left loopback, no script error, no console error, no CSP violation, no serious accessibility finding', () => {
    expect(problems).toEqual({ blocked: [], pageErrors: [], consoleErrors: [], csp: [] });
    expect(axeFindings).toEqual([]);
  });

  test('nothing of the console on the public port', async () => {
    for (const g of gateways) {
      const answer = await fetch(`${g.url}/console/sign-in`);
      expect(answer.status).toBe(404);
    }
  });
});
