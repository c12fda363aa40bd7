/**
 * The console's holder pages in Debian's Chromium (playwright-core): the accounts page, one
 * account, a key's page with its account, the requests page; an operator approves with the button
 * (a real form post with its CSRF token); no CSP violation, no script error, and axe-core finds no
 * serious or critical violation on any of these pages. Without Chromium this suite fails.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import Redis from 'ioredis';
import { chromium, type Browser, type Page } from 'playwright-core';
import { fixtureListings } from '../fixtures/listings';
import { adminCall, readyAdminUrl } from '../kit/admin-api';
import { makeTempDir, removeTempDirs, sha256Hex, startBackend, startGateway, writeGatewayConfig, writeKeysFile, writeListingsFile, type Proc } from '../kit/gateway-stack';
import { startRedis, type RedisServer } from '../kit/redis-server';
import { runAs } from '../../gateway/audit/actor';
import { loadGatewayConfig } from '../../gateway/config/gateway-config';
import { createKeyAdmin } from '../../gateway/keys/key-admin';
import { createRedisHolderStores } from '../../gateway/requests/holder-stores';

jest.setTimeout(60_000);

const CHROMIUM = (() => {
  try {
    return execFileSync('sh', ['-c', 'command -v chromium'], { encoding: 'utf8' }).trim();
  } catch {
    return '';
  }
})();
const AXE_SOURCE = fs.readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');
const TOKEN = 'otto-holders-browser-operator-token-0123';
const ADMIN = 'ada-holders-browser-admin-token-012345';

let redisServer: RedisServer;
let redis: Redis;
let backend: Proc;
let gateway: Proc;
let adminUrl: string;
let browser: Browser;
let requestId: string;
const problems: string[] = [];
const axeFindings: string[] = [];

async function checkAccessibility(page: Page, label: string): Promise<void> {
  await page.evaluate(AXE_SOURCE);
  const violations = await page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run(ctx: Document, o: object): Promise<{ violations: Array<{ id: string; impact: string; nodes: unknown[] }> }> } }).axe;
    return (await axe.run(document, { resultTypes: ['violations'] })).violations.map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.length }));
  });
  for (const v of violations) if (v.impact === 'serious' || v.impact === 'critical') axeFindings.push(`${label}: ${v.id} (${v.impact}, ${v.nodes} nodes)`);
}

beforeAll(async () => {
  if (!CHROMIUM) throw new Error('Chromium is required (apt-get install -y chromium)');
  redisServer = await startRedis();
  redis = new Redis(redisServer.url);
  backend = await startBackend(writeListingsFile(fixtureListings()));
  const dir = makeTempDir();
  const tokensFile = path.join(dir, 'operators.yaml');
  fs.writeFileSync(tokensFile, `- name: otto\n  token_sha256: ${sha256Hex(TOKEN)}\n  role: operator\n- name: ada\n  token_sha256: ${sha256Hex(ADMIN)}\n  role: admin\n`);
  const gatewayConfig = writeGatewayConfig(undefined, dir);
  gateway = await startGateway({ backendUrl: backend.url, keysFile: writeKeysFile([], dir), gatewayConfig, env: { REDIS_URL: redisServer.url, KEY_STORE: 'redis', ADMIN_PORT: '0', ADMIN_TOKENS_FILE: tokensFile } });
  adminUrl = await readyAdminUrl(gateway, TOKEN);
  expect((await adminCall(adminUrl, ADMIN, 'POST', '/admin/accounts', { id: 'acme', name: 'Acme Estates', emails: ['ops@acme.example'] })).status).toBe(201);
  expect((await adminCall(adminUrl, ADMIN, 'POST', '/admin/keys', { id: 'acme-key', tier: 'standard', countries: ['GB'], address: '127.0.0.1', account: 'acme' })).status).toBe(201);
  const holders = createRedisHolderStores(redis as never, createKeyAdmin(redis as never, loadGatewayConfig(gatewayConfig)));
  requestId = (await runAs({ name: 'holder:acme:ops@acme.example', channel: 'portal' }, () => holders.requests.create({ keyId: 'acme-key', accountId: 'acme', change: { tier: 'advanced' } }))).id;
  browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync'] });
});

afterAll(async () => {
  await browser?.close();
  await gateway?.stop();
  await backend?.stop();
  redis?.disconnect();
  await redisServer?.stop();
  removeTempDirs();
});

test('an operator goes through the holder pages and approves a request with the button', async () => {
  const context = await browser.newContext();
  await context.exposeBinding('reportCspViolation', (_source, text: string) => problems.push(`csp: ${text}`));
  await context.addInitScript(() => {
    document.addEventListener('securitypolicyviolation', (e: SecurityPolicyViolationEvent) => {
      (window as unknown as { reportCspViolation(t: string): void }).reportCspViolation(`${e.violatedDirective} ${e.blockedURI}`);
    });
  });
  const page = await context.newPage();
  page.on('pageerror', (err) => problems.push(`page error: ${err.message}`));
  await page.goto(`${adminUrl}/console/sign-in`);
  await page.getByLabel('Operator token').fill(TOKEN);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL(`${adminUrl}/console/keys`);

  await page.getByRole('link', { name: 'Accounts' }).click();
  await page.waitForURL(`${adminUrl}/console/accounts`);
  await checkAccessibility(page, 'accounts');
  await page.getByRole('link', { name: 'acme', exact: true }).click();
  await page.waitForURL(`${adminUrl}/console/accounts/acme`);
  expect(await page.locator('#account-keys tr[data-key-id="acme-key"]').count()).toBe(1);
  await checkAccessibility(page, 'account');
  await page.getByRole('link', { name: 'acme-key' }).click();
  await page.waitForURL(`${adminUrl}/console/keys/acme-key`);
  expect(await page.locator('#key-account').textContent()).toBe('acme');
  await checkAccessibility(page, 'key');

  await page.getByRole('link', { name: 'Requests' }).click();
  await page.waitForURL(`${adminUrl}/console/requests`);
  await checkAccessibility(page, 'requests');
  const row = page.locator(`tr[data-request-id="${requestId}"]`);
  expect(await row.locator('td').nth(3).textContent()).toBe('tier advanced');
  await row.getByRole('button', { name: 'Approve' }).click();
  await page.waitForURL(`${adminUrl}/console/requests?done=approved`);
  expect(await page.getByRole('status').textContent()).toContain('Approved');
  await checkAccessibility(page, 'requests after approval');
  expect((await adminCall(adminUrl, TOKEN, 'GET', '/admin/keys/acme-key')).body.tier).toBe('advanced');
  expect((await adminCall(adminUrl, TOKEN, 'GET', `/admin/requests/${requestId}`)).body).toMatchObject({ status: 'approved', decided_by: 'otto' });
  await context.close();
  expect(problems).toEqual([]);
  expect(axeFindings).toEqual([]);
});
