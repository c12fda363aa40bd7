/**
 * Writes the docs' pictures of the operator console (docs/console-keys.png, console-key.png,
 * console-audit.png): `npm run docs:screenshots` after a change to the console's pages. A
 * redis-server on a free loopback port, a data service and a gateway with its admin listener (from
 * dist/, built by the npm script), a few keys in several states used a little, then Debian's
 * Chromium (playwright-core) signed in as an admin. `npm test` never writes these files.
 *
 * Not part of the build (tsconfig.json excludes it): it runs with tsx and uses the test kit.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { chromium, type Page } from 'playwright-core';
import { getWithKey, sha256Hex, writeTempFile, makeTempDir, removeTempDirs } from '../test/kit/gateway-stack';
import { announcedUrl } from '../test/kit/log-lines';
import { ROOT } from '../test/kit/processes';
import { startRedisStack } from '../test/kit/redis-stack';
import { eventually } from '../test/kit/timing';

const DOCS = path.join(ROOT, 'docs');
const ADMIN = { name: 'ada', token: `ada-docs-${Date.now()}-screenshots-token` };
const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync'];
const TODAY = new Date().toISOString().slice(0, 10);

function chromiumPath(): string {
  try {
    return execFileSync('sh', ['-c', 'command -v chromium'], { encoding: 'utf8' }).trim();
  } catch {
    throw new Error('Chromium is required (apt-get install -y chromium)');
  }
}

async function main(): Promise<void> {
  const tokensFile = writeTempFile('operators.yaml', `- name: ${ADMIN.name}\n  token_sha256: ${sha256Hex(ADMIN.token)}\n  role: admin\n`, makeTempDir());
  const stack = await startRedisStack({ env: { USAGE_FLUSH_MS: '200' }, gateways: [{ ADMIN_PORT: '0', ADMIN_TOKENS_FILE: tokensFile }] });
  const browser = await chromium.launch({ executablePath: chromiumPath(), headless: true, args: CHROMIUM_ARGS });
  try {
    const adminUrl = await announcedUrl(stack.gateway, 'admin api listening');
    const admin = async (method: string, url: string, body?: unknown): Promise<{ key?: string }> => {
      const res = await fetch(`${adminUrl}${url}`, {
        method, headers: { authorization: `Bearer ${ADMIN.token}`, 'content-type': 'application/json' }, ...(body ? { body: JSON.stringify(body) } : {}),
      });
      if (!res.ok) throw new Error(`${method} ${url}: ${res.status} ${await res.text()}`);
      return res.json() as Promise<{ key?: string }>;
    };
    // The key of the pictures: created, paused, settled and rolled, then used; three others beside it.
    const keys: Array<[string, string, string[], number]> = [
      ['browser-key', 'standard', ['GB', 'FR'], 60], ['acme-uk', 'advanced', ['GB'], 40], ['bistro-fr', 'standard', ['FR', 'BE'], 30], ['charter-de', 'standard', ['DE'], 100],
    ];
    for (const [id, tier, countries, perDay] of keys) {
      const { key } = await admin('POST', '/admin/keys', { id, tier, countries, address: '127.0.0.1', per_day: perDay });
      for (let i = 0; i < perDay / 3; i++) await getWithKey(stack.url, '/v1/ping', key!);
    }
    await admin('POST', '/admin/keys/browser-key/pause', { reason: 'payment_dispute' });
    await admin('POST', '/admin/keys/browser-key/settle');
    await admin('POST', '/admin/keys/browser-key/roll', { grace_seconds: 3600 });
    await admin('POST', '/admin/keys/bistro-fr/pause', { reason: 'unpaid_renewal' });

    const page = await browser.newPage({ viewport: { width: 1280, height: 860 } });
    await page.goto(`${adminUrl}/console`);
    await page.waitForURL(`${adminUrl}/console/sign-in`);
    await page.getByLabel('Operator token').fill(ADMIN.token);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${adminUrl}/console/keys`);
    // Today's usage history is written by the gateway every USAGE_FLUSH_MS: wait until the key page shows it.
    await eventually('today in the usage history of browser-key', async () => {
      await page.goto(`${adminUrl}/console/keys/browser-key`);
      return Number(await page.locator(`#usage-history tr[data-date="${TODAY}"] td[data-accepted]`).getAttribute('data-accepted')) > 0;
    }, { timeoutMs: 20_000, intervalMs: 200 });
    await shoot(page, `${adminUrl}/console/keys`, 'console-keys.png');
    await shoot(page, `${adminUrl}/console/keys/browser-key`, 'console-key.png', true);
    await shoot(page, `${adminUrl}/console/audit?key_id=browser-key`, 'console-audit.png');
  } finally {
    await browser.close();
    await stack.stop();
    removeTempDirs();
  }
}

async function shoot(page: Page, url: string, name: string, fullPage = false): Promise<void> {
  await page.goto(url);
  await page.screenshot({ path: path.join(DOCS, name), fullPage });
  process.stdout.write(`wrote docs/${name} (${fs.statSync(path.join(DOCS, name)).size} bytes)\n`);
}

main().catch((err: unknown) => {
  process.stderr.write(`docs:screenshots failed: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
