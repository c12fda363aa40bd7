/**
 * The walk-through of docs/payments-stripe.md, command by command, on `npm start` with the Redis
 * key store (ports moved to free ones): the demo keys imported, then `npm run demo:billing` steps
 * move the demo account's Standard key: a failed renewal pauses it, a payment resumes it within a
 * second, a dispute keeps it paused (a payment does not help) until the dispute is won.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { expectError, expectKeyedSuccess, getWithKey, seenByAll } from '../kit/gateway-stack';
import { runKeysCli } from '../kit/keys-cli';
import { waitForLine } from '../kit/log-lines';
import { ROOT, startProcess, type RunningProcess } from '../kit/processes';
import { freePort, startRedis, type RedisServer } from '../kit/redis-server';

jest.setTimeout(120_000);

const STANDARD = 'demo-standard-7Qx2mR9vK4';
let redis: RedisServer;
let all: RunningProcess;
let gatewayUrl: string;
let demoEnv: Record<string, string>;

beforeAll(async () => {
  redis = await startRedis();
  const [hooksPort, apiPort] = [String(await freePort()), String(await freePort())];
  const imported = await runKeysCli(redis.url, ['import', 'config/demo-keys.yaml', '--allow-demo']);
  expect(imported.code).toBe(0);
  all = await startProcess('scripts/start-all.js', {
    KEY_STORE: 'redis', REDIS_URL: redis.url,
    BACKEND_PORT: String(await freePort()), PORT: '0', OPS_PORT: '0', PORTAL_PORT: String(await freePort()),
    HOOKS_PORT: hooksPort, STRIPE_API_URL: `http://127.0.0.1:${apiPort}`,
  }, 60_000);
  const line = await waitForLine(all, '"key_store"', 30_000);
  gatewayUrl = `http://127.0.0.1:${(JSON.parse(line) as { port: number }).port}`;
  await waitForLine(all, '"msg":"hooks listening"', 30_000);
  demoEnv = { DEMO_HOOKS_URL: `http://127.0.0.1:${hooksPort}`, DEMO_STRIPE_API_PORT: apiPort };
}, 120_000);
afterAll(async () => {
  await all?.stop();
  await redis?.stop();
});

/** `npm run demo:billing -- STEP` (its build step aside): the built script with the step as its argument. */
function runDemo(step: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [path.join(ROOT, 'dist/scripts/billing-demo.js'), step], { cwd: ROOT, env: { PATH: process.env.PATH ?? '', ...demoEnv } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

async function demo(step: string): Promise<void> {
  const run = await runDemo(step);
  expect({ step, code: run.code, stderr: run.stderr }).toEqual({ step, code: 0, stderr: '' });
  expect(run.stdout).toMatch(/: 200 \{"received":true\}/);
}

test('a failed renewal pauses the key; a payment resumes it within a second; a dispute keeps it paused until won', async () => {
  expectKeyedSuccess(await getWithKey(gatewayUrl, '/v1/ping', STANDARD));

  await demo('past_due');
  await seenByAll([gatewayUrl], STANDARD, 403, Date.now(), 1000);
  expectError(await getWithKey(gatewayUrl, '/v1/ping', STANDARD), 'key_paused');

  await demo('paid');
  await seenByAll([gatewayUrl], STANDARD, 200, Date.now(), 1000);

  await demo('dispute');
  await seenByAll([gatewayUrl], STANDARD, 403, Date.now(), 1000);
  await demo('paid');
  expectError(await getWithKey(gatewayUrl, '/v1/ping', STANDARD), 'key_paused');

  await demo('won');
  await seenByAll([gatewayUrl], STANDARD, 200, Date.now(), 1000);
});
