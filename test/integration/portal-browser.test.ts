/**
 * The portal in Chromium with a real OpenID Connect provider (oidc-provider, started by the test on
 * a free loopback port): a verified email signs in to its account; an unverified or unknown one
 * gets no session; a tampered state or code is refused; removing the email ends the session. Every
 * portal page passes axe-core (no serious or critical violation) with no CSP violation.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { fixtureListings } from '../fixtures/listings';
import { cursorSecret, makeTempDir, removeTempDirs, startBackend, startGateway, writeKeysFile, writeListingsFile, type Proc } from '../kit/gateway-stack';
import { operatorOf, portalEnv, writePortalConfig } from '../kit/portal';
import { checkAccessibility, launchChromium, newPortalPage, type BrowserProblems } from '../kit/portal-browser';
import { ROOT, startNodeScript, type RunningProcess } from '../kit/processes';
import { startRedis, type RedisServer } from '../kit/redis-server';

jest.setTimeout(90_000);

const CLIENT = { client_id: 'listings-portal', client_secret: 'portal-test-client-secret-0123456789' };
const ACCOUNTS = {
  ada: { email: 'Ada@Acme.test', email_verified: true },
  unverified: { email: 'ops@acme.test', email_verified: false },
  stranger: { email: 'nobody@elsewhere.test', email_verified: true },
  bob: { email: 'bob@acme.test', email_verified: true },
};

let redisServer: RedisServer;
let backend: Proc;
let gateway: Proc;
let provider: RunningProcess;
let operator: Awaited<ReturnType<typeof operatorOf>>;
let browser: Browser;
let publicUrl: string;
let portalPort: number;
let relay: http.Server;
/** Set by a test: changes the next callback's query on its way through the load balancer. */
let tamper: ((url: URL) => void) | undefined;

/**
 * The load balancer in front of the portal (PORTAL_PUBLIC_URL is its address): it passes every
 * request on unchanged, except that a test may change the next callback's query (its `state` or
 * `code`), as an attacker in the middle would.
 */
async function startRelay(): Promise<string> {
  relay = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://relay');
    if (tamper && url.pathname === '/portal/callback') {
      tamper(url);
      tamper = undefined;
    }
    const upstream = http.request({ host: '127.0.0.1', port: portalPort, method: req.method, path: `${url.pathname}${url.search}`, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => relay.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(relay.address() as AddressInfo).port}`;
}
/** What the provider's own pages do (its development login page loads web fonts) is not asserted. */
const providerPages: BrowserProblems = { blocked: [], pageErrors: [], consoleErrors: [], csp: [], axe: [] };
const portalPages: BrowserProblems = { blocked: [], pageErrors: [], consoleErrors: [], csp: [], axe: [] };

beforeAll(async () => {
  redisServer = await startRedis();
  const dir = makeTempDir();
  const configFile = path.join(dir, 'gateway.yaml');
  writePortalConfig(configFile, { countries: 'request', tier: 'direct' });
  publicUrl = await startRelay();
  const env = await portalEnv(publicUrl);
  portalPort = Number(env.PORTAL_PORT);
  provider = await startNodeScript(path.join(ROOT, 'test', 'kit', 'oidc-provider.mjs'), {
    OIDC_CLIENT: JSON.stringify({ ...CLIENT, redirect_uri: `${publicUrl}/portal/callback` }),
    OIDC_ACCOUNTS: JSON.stringify(ACCOUNTS),
  });
  backend = await startBackend(writeListingsFile(fixtureListings(), 'json', dir));
  gateway = await startGateway({
    backendUrl: backend.url, keysFile: writeKeysFile([]), gatewayConfig: configFile, cursorSecret: cursorSecret(),
    env: {
      KEY_STORE: 'redis', REDIS_URL: redisServer.url, ...env,
      PORTAL_OIDC_ISSUER: provider.url, PORTAL_OIDC_CLIENT_ID: CLIENT.client_id, PORTAL_OIDC_CLIENT_SECRET: CLIENT.client_secret, PORTAL_OIDC_ALLOW_HTTP: '1',
    },
  });
  operator = await operatorOf(redisServer.url, configFile);
  await operator.accounts.create({ id: 'acme', name: 'Acme Ltd', emails: ['ada@acme.test', 'ops@acme.test', 'bob@acme.test'] });
  await operator.key('acme-live', 'acme');
  await operator.key('acme-paused', 'acme');
  await operator.admin.pause('acme-paused', 'payment_dispute');
  browser = await launchChromium();
}, 90_000);

afterAll(async () => {
  await browser?.close();
  relay?.close();
  await gateway?.stop();
  await backend?.stop();
  await provider?.stop();
  operator?.close();
  await redisServer?.stop();
  removeTempDirs();
});

/** From the portal's sign-in page through the provider's login form, as `login`. */
async function signInThroughProvider(page: Page, login: string, onCallback?: (url: URL) => void): Promise<void> {
  if (onCallback) tamper = onCallback;
  await page.goto(`${publicUrl}/portal/sign-in`);
  await page.click('#oidc-sign-in');
  await page.waitForSelector('input[name="login"]');
  await page.fill('input[name="login"]', login);
  await page.fill('input[name="password"]', 'any');
  await page.click('button[type="submit"]');
}

const sessionCookies = async (page: Page) => (await page.context().cookies()).filter((c) => c.name === 'lgw_portal');

test('a verified email held by an account signs in to that account (case-insensitive)', async () => {
  const { context, page } = await newPortalPage(browser, providerPages);
  await signInThroughProvider(page, 'ada');
  await page.waitForURL(`${publicUrl}/portal/keys`);
  expect(await page.textContent('.who')).toContain('Acme Ltd (ada@acme.test)');
  expect(await page.locator('#keys tbody tr').count()).toBe(2);
  const [cookie] = await sessionCookies(page);
  expect(cookie).toMatchObject({ httpOnly: true, sameSite: 'Lax', path: '/portal', secure: false });
  await context.close();
});

test.each([['unverified', 'an unverified email'], ['stranger', 'an email no account holds']])('%s: %s gets a page saying so, and no session', async (login) => {
  const { context, page } = await newPortalPage(browser, providerPages);
  await signInThroughProvider(page, login);
  await page.waitForURL(/\/portal\/callback/);
  await page.waitForSelector('h1');
  expect(await page.textContent('h1')).toBe('No account');
  expect(await sessionCookies(page)).toEqual([]);
  await page.goto(`${publicUrl}/portal/keys`);
  expect(page.url()).toBe(`${publicUrl}/portal/sign-in`);
  await context.close();
});

test.each([['state'], ['code']])('a tampered %s is refused: no session', async (param) => {
  const { context, page } = await newPortalPage(browser, providerPages);
  await signInThroughProvider(page, 'ada', (url) => url.searchParams.set(param, `${url.searchParams.get(param)}x`));
  await page.waitForSelector('.notice.error', { timeout: 15_000 });
  expect(await page.textContent('h1')).toBe('Sign in');
  expect(await page.textContent('.notice.error')).toContain('refused');
  expect(await sessionCookies(page)).toEqual([]);
  await context.close();
});

test('removing the email a session signed in with ends that session at its next request', async () => {
  const { context, page } = await newPortalPage(browser, providerPages);
  await signInThroughProvider(page, 'bob');
  await page.waitForURL(`${publicUrl}/portal/keys`);
  await operator.accounts.update('acme', { emails: ['ada@acme.test', 'ops@acme.test'] });
  await page.goto(`${publicUrl}/portal/keys/acme-live`);
  expect(page.url()).toBe(`${publicUrl}/portal/sign-in`);
  expect(await sessionCookies(page)).toEqual([]);
  await context.close();
});

test('every portal page: no serious or critical axe-core violation, no CSP violation, no script error', async () => {
  const { context, page } = await newPortalPage(browser, portalPages);
  await page.goto(`${publicUrl}/portal/sign-in`);
  await checkAccessibility(page, 'sign-in', portalPages);
  const token = await operator.links.issue('acme');
  await page.goto(`${publicUrl}/portal/link/${token}`);
  await checkAccessibility(page, 'link', portalPages);
  await page.click('#link-sign-in');
  await page.waitForURL(`${publicUrl}/portal/keys`);
  await checkAccessibility(page, 'keys', portalPages);
  for (const p of ['/portal/keys/acme-live', '/portal/keys/acme-paused', '/portal/keys/acme-live/revoke', '/portal/requests', '/portal/keys/nope']) {
    await page.goto(`${publicUrl}${p}`);
    await checkAccessibility(page, p, portalPages);
  }
  // A form sent back with a problem, a request recorded, a roll's one-time value.
  await page.goto(`${publicUrl}/portal/keys/acme-live`);
  await page.fill('#addresses', '300.1.1.1');
  await page.click('#change-addresses button[type="submit"]');
  await page.waitForSelector('#addresses-error');
  await checkAccessibility(page, 'addresses problem', portalPages);
  await page.fill('#countries', 'FR');
  await page.click('#change-countries button[type="submit"]');
  await page.waitForURL(/done=requested/);
  await page.goto(`${publicUrl}/portal/requests`);
  expect(await page.locator('#requests tbody tr').count()).toBe(1);
  await checkAccessibility(page, 'requests (one)', portalPages);
  await page.goto(`${publicUrl}/portal/keys/acme-live`);
  await page.click('#roll');
  await page.waitForSelector('#key-value');
  await checkAccessibility(page, 'rolled', portalPages);
  await context.close();
  expect(portalPages).toEqual({ blocked: [], pageErrors: [], consoleErrors: [], csp: [], axe: [] });
});
