import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { chromium, type Page } from 'playwright-core';
import { loadGatewayConfig } from '../gateway/config/gateway-config';
import { parseRedisTopology } from '../gateway/config/redis-env';
import { createKeyAdmin } from '../gateway/keys/key-admin';
import { connectRedis, whenReady } from '../gateway/redis/connect';
import { createRedisHolderStores } from '../gateway/requests/holder-stores';

/**
 * `npm run docs:portal-screenshots`: the key holders' portal's pages as pictures in docs/ (for
 * README.md and docs/portal.md), from a real Redis, data service and gateway on free loopback ports, in Chromium
 * (/usr/bin/chromium). Not part of `npm test`: pictures change only when this is run.
 */
const ROOT = path.resolve(__dirname, '..', '..');
const DOCS = path.join(ROOT, 'docs');
const children: ChildProcess[] = [];

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
  });
}

/** Starts `command` and resolves once a line of its output contains `ready`. */
function start(command: string, args: string[], env: NodeJS.ProcessEnv, ready: string): Promise<void> {
  const child = spawn(command, args, { cwd: ROOT, env: { PATH: process.env.PATH ?? '', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  return new Promise((resolve, reject) => {
    let seen = '';
    const timer = setTimeout(() => reject(new Error(`${command} did not start:\n${seen}`)), 30_000);
    const onData = (chunk: Buffer): void => {
      seen += chunk.toString('utf8');
      if (seen.includes(ready)) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => reject(new Error(`${command} exited with ${code}:\n${seen}`)));
  });
}

async function shoot(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: path.join(DOCS, name), fullPage: true });
  process.stdout.write(`docs/${name}\n`);
}

async function main(): Promise<void> {
  const [redisPort, backendPort, portalPort, gatewayPort] = await Promise.all([freePort(), freePort(), freePort(), freePort()]);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'portal-shots-'));
  const config = path.join(dir, 'gateway.yaml');
  fs.writeFileSync(config, `${fs.readFileSync(path.join(ROOT, 'config', 'gateway.yaml'), 'utf8')}\nportal:\n  self_service: { countries: request, tier: direct }\n`);
  await start('redis-server', ['--port', String(redisPort), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {}, 'Ready to accept connections');
  await start(process.execPath, ['dist/backend-mock/main.js'], { BACKEND_PORT: String(backendPort) }, '"listening"');
  const redisUrl = `redis://127.0.0.1:${redisPort}`;
  const publicUrl = `http://127.0.0.1:${portalPort}`;
  await start(process.execPath, ['dist/gateway/main.js'], {
    PORT: String(gatewayPort), BACKEND_URL: `http://127.0.0.1:${backendPort}`, KEY_STORE: 'redis', REDIS_URL: redisUrl, GATEWAY_CONFIG: config,
    CURSOR_SECRET: randomBytes(32).toString('base64url'), PORTAL_PORT: String(portalPort), PORTAL_PUBLIC_URL: publicUrl, USAGE_FLUSH_MS: '200',
  }, '"portal listening"');

  const redis = connectRedis(parseRedisTopology({ REDIS_URL: redisUrl, REDIS_COMMAND_TIMEOUT_MS: 5000 })!, pino({ level: 'silent' }), 'screenshots', { autoPipelining: false });
  await whenReady(redis, 10_000);
  const admin = createKeyAdmin(redis, loadGatewayConfig(config));
  const holders = createRedisHolderStores(redis, admin);
  await holders.accounts.create({ id: 'acme', name: 'Acme Estates Ltd', emails: ['ops@acme.example'] });
  const live = (await admin.create({ id: 'acme-production', tier: 'standard', countries: ['GB', 'FR'], addresses: ['127.0.0.1', '203.0.113.10'], account: 'acme' })).key;
  await admin.create({ id: 'acme-staging', tier: 'standard', countries: ['GB'], address: '127.0.0.1', account: 'acme' });
  await admin.pause('acme-staging', 'unpaid_renewal');
  for (let i = 0; i < 25; i++) await fetch(`http://127.0.0.1:${gatewayPort}/v1/properties?country=GB&limit=3`, { headers: { 'x-api-key': live } });
  await new Promise((r) => setTimeout(r, 500));

  const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', headless: true, args: ['--headless', '--no-sandbox', '--disable-gpu'] });
  try {
    const page = await (await browser.newContext({ viewport: { width: 1200, height: 800 } })).newPage();
    await page.goto(`${publicUrl}/portal/sign-in`);
    await shoot(page, 'portal-sign-in.png');
    await page.goto(`${publicUrl}/portal/link/${await holders.linkTokens.issue('acme')}`);
    await page.click('#link-sign-in');
    await page.waitForURL(`${publicUrl}/portal/keys`);
    await shoot(page, 'portal-keys.png');
    await page.goto(`${publicUrl}/portal/keys/acme-production`);
    await page.fill('#countries', 'DE');
    await page.click('#change-countries button[type="submit"]');
    await page.waitForURL(/done=requested/);
    await shoot(page, 'portal-key.png');
    await page.fill('#addresses', '127.0.0.1\n203.0.113.300');
    await page.click('#change-addresses button[type="submit"]');
    await page.waitForSelector('#addresses-error');
    await shoot(page, 'portal-form-problem.png');
    await page.goto(`${publicUrl}/portal/keys/acme-staging`);
    await shoot(page, 'portal-paused-key.png');
    await page.goto(`${publicUrl}/portal/requests`);
    await shoot(page, 'portal-requests.png');
  } finally {
    await browser.close();
    redis.disconnect();
  }
}

main()
  .catch((err: Error) => {
    process.stderr.write(`${err.message}\n`);
    process.exitCode = 1;
  })
  .finally(() => {
    for (const c of children) c.kill('SIGTERM');
  });
