/**
 * `/docs` in a real browser: Debian's Chromium, driven by playwright-core, against a real gateway.
 * Every request to anything but loopback is blocked, so the page must work with no network. The page
 * must render the document (title, every endpoint, every error code), raise no script error and no
 * Content-Security-Policy violation, and every answer the browser gets from the gateway must conform
 * to the document like the kit's own requests.
 *
 * There is no skip: without Chromium at /usr/bin/chromium this suite fails (`.ci/run` installs it).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import YAML from 'yaml';
import { ERROR_CATALOGUE, ERROR_CODES } from '../../gateway/errors';
import { randomKeyValue, startStack, type Stack } from '../kit/gateway-stack';
import { conformanceProblems, DOCUMENT_FILE } from '../kit/openapi-conformance';

const CHROMIUM = '/usr/bin/chromium';
const CHROMIUM_ARGS = ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];
const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]']);

const doc = YAML.parse(fs.readFileSync(DOCUMENT_FILE, 'utf8')) as { info: { title: string }; paths: Record<string, Record<string, unknown>> };
const OPERATIONS = Object.entries(doc.paths).flatMap(([p, item]) => Object.keys(item).filter((m) => m === 'get').map((m) => ({ method: m.toUpperCase(), path: p })));

let stack: Stack;
let context: BrowserContext;
let page: Page;
let userDataDir: string;
const blocked: string[] = [];
const pageErrors: string[] = [];
const consoleErrors: string[] = [];
const nonConforming: string[] = [];
const gatewayAnswers: string[] = [];

beforeAll(async () => {
  if (!fs.existsSync(CHROMIUM)) throw new Error(`Chromium is required at ${CHROMIUM} (apt-get install chromium; .ci/run installs it)`);
  stack = await startStack({ keys: [{ id: 'docs', value: randomKeyValue('docs'), tier: 'standard', countries: ['GB'], address: '127.0.0.1', status: 'active' }] });
  userDataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'gw-chromium-'));
  context = await chromium.launchPersistentContext(userDataDir, { executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS, offline: false });
  // No network but loopback: anything else is recorded and aborted.
  await context.route('**/*', (route) => {
    const url = new URL(route.request().url());
    if ((url.protocol === 'http:' || url.protocol === 'https:') && LOOPBACK_HOSTS.has(url.hostname)) return route.continue();
    if (url.protocol === 'data:' || url.protocol === 'blob:') return route.continue();
    blocked.push(url.href);
    return route.abort('blockedbyclient');
  });
  page = context.pages()[0] ?? (await context.newPage());
  page.on('pageerror', (err) => pageErrors.push(err.message));
  page.on('console', (msg) => {
    if (msg.type() === 'error') consoleErrors.push(msg.text());
  });
  page.on('response', async (response) => {
    const url = new URL(response.url());
    if (url.origin !== stack.url) return;
    const requestPath = url.pathname + url.search;
    gatewayAnswers.push(`${response.status()} ${requestPath}`);
    const headers = await response.allHeaders();
    const text = requestPath === '/v1/openapi.json' ? await response.text() : '';
    const problems = conformanceProblems({ method: response.request().method(), path: requestPath, status: response.status(), headers, text });
    nonConforming.push(...problems);
  });
  await page.goto(`${stack.url}/docs`, { waitUntil: 'load' });
  // Swagger UI renders after fetching /v1/openapi.json: wait for the last operation to appear.
  await page.locator('.opblock').nth(OPERATIONS.length - 1).waitFor({ timeout: 20_000 });
}, 60_000);

afterAll(async () => {
  await context?.close();
  await stack?.stop();
  if (userDataDir) fs.rmSync(userDataDir, { recursive: true, force: true });
});

describe('/docs in Chromium, with no network but loopback', () => {
  test('renders the document: title and version', async () => {
    await expect(page.title()).resolves.toContain(doc.info.title);
    const heading = await page.locator('.info .title').innerText();
    expect(heading).toContain(doc.info.title);
  });

  test('lists every endpoint of the document, each once, as GET', async () => {
    const shown = await page.locator('.opblock').evaluateAll((blocks) =>
      blocks.map((b) => `${b.querySelector('.opblock-summary-method')?.textContent?.trim()} ${b.querySelector('.opblock-summary-path')?.getAttribute('data-path')}`),
    );
    expect(shown.sort()).toEqual(OPERATIONS.map((o) => `${o.method} ${o.path}`).sort());
  });

  test('lists every error code of the catalogue, with its status, in the rendered error table', async () => {
    const rows = await page.locator('.information-container table tr').evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent?.trim() ?? '')));
    const table = new Map(rows.filter((r) => r.length >= 2).map((r) => [r[0], r[1]]));
    for (const code of ERROR_CODES) expect({ code, status: table.get(code) }).toEqual({ code, status: String(ERROR_CATALOGUE[code].status) });
  });

  test('shows an operation\'s responses and their error codes when it is opened', async () => {
    const list = page.locator('.opblock', { has: page.locator('[data-path="/v1/properties"]') });
    await list.locator('.opblock-summary').first().click();
    const responses = list.locator('.responses-table');
    await responses.first().waitFor({ timeout: 10_000 });
    const text = await list.innerText();
    for (const code of ['invalid_parameter', 'invalid_cursor', 'country_not_entitled', 'rate_limited', 'service_unavailable']) expect(text).toContain(code);
    for (const status of ['200', '400', '401', '403', '404', '405', '429', '500', '503']) expect(text).toContain(status);
  });

  test('needs nothing but this service: no request left loopback, no script error, no CSP violation', async () => {
    expect(blocked).toEqual([]);
    // The block works: a page elsewhere is stopped in the browser (never resolved or sent).
    const probe = await context.newPage();
    const outcome = await probe.goto('http://example.invalid/probe').then(() => 'loaded', (err: Error) => err.message);
    await probe.close();
    expect({ outcome, blocked: blocked.splice(0) }).toEqual({ outcome: expect.stringContaining('ERR_BLOCKED_BY_CLIENT'), blocked: ['http://example.invalid/probe'] });
    expect(pageErrors).toEqual([]);
    expect(consoleErrors).toEqual([]);
    // The page, its assets and the document all came from the gateway.
    expect(gatewayAnswers).toEqual(expect.arrayContaining(['200 /docs', '200 /v1/openapi.json', '200 /docs/assets/swagger-ui-bundle.js', '200 /docs/assets/init.js']));
  });

  test('every answer the browser got from the gateway conforms to the document', () => {
    expect(gatewayAnswers.length).toBeGreaterThanOrEqual(4);
    expect(nonConforming).toEqual([]);
  });
});
