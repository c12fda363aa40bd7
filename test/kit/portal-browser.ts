/**
 * Chromium for the portal's pages (playwright-core, Debian's /usr/bin/chromium): a context that
 * reaches loopback only, records CSP violations, page errors and console errors, and runs axe-core.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';

const CHROMIUM = (() => {
  try {
    return execFileSync('sh', ['-c', 'command -v chromium'], { encoding: 'utf8' }).trim();
  } catch {
    return '';
  }
})();
const ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync'];
const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]']);
const AXE_SOURCE = fs.readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');

export interface BrowserProblems {
  blocked: string[];
  pageErrors: string[];
  consoleErrors: string[];
  csp: string[];
  axe: string[];
}

export async function launchChromium(): Promise<Browser> {
  if (!CHROMIUM) throw new Error('Chromium is required (apt-get install -y chromium)');
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: ARGS });
}

export async function newPortalPage(browser: Browser, problems: BrowserProblems, viewport = { width: 1200, height: 900 }): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({ viewport });
  await context.route('**/*', (route) => {
    const url = new URL(route.request().url());
    if ((url.protocol === 'http:' || url.protocol === 'https:') && LOOPBACK_HOSTS.has(url.hostname)) return route.continue();
    problems.blocked.push(url.href);
    return route.abort('blockedbyclient');
  });
  // Through the DevTools protocol, so the page's CSP does not apply to the listener itself.
  await context.exposeBinding('reportCspViolation', (_source, text: string) => problems.csp.push(text));
  await context.addInitScript(() => {
    document.addEventListener('securitypolicyviolation', (e: SecurityPolicyViolationEvent) => {
      (window as unknown as { reportCspViolation(t: string): void }).reportCspViolation(`${e.violatedDirective} ${e.blockedURI} ${document.location.pathname}`);
    });
  });
  const page = await context.newPage();
  page.on('pageerror', (err) => problems.pageErrors.push(err.message));
  page.on('console', (msg) => {
    if (msg.type() === 'error' && !/status of 4\d\d/.test(msg.text())) problems.consoleErrors.push(msg.text());
  });
  return { context, page };
}

/** axe-core evaluated through the DevTools protocol (the CSP forbids any script on the page). */
export async function checkAccessibility(page: Page, label: string, problems: BrowserProblems): Promise<void> {
  await page.evaluate(AXE_SOURCE);
  const violations = await page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run(ctx: Document, o: object): Promise<{ violations: Array<{ id: string; impact: string; nodes: unknown[] }> }> } }).axe;
    const result = await axe.run(document, { resultTypes: ['violations'] });
    return result.violations.map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.length }));
  });
  for (const v of violations) if (v.impact === 'serious' || v.impact === 'critical') problems.axe.push(`${label}: ${v.id} (${v.impact}, ${v.nodes} nodes)`);
}
