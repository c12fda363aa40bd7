/**
 * Finding 7 of the second security round: limits are whole numbers from 1 to 999,999,999,999,999
 * wherever they are accepted (the admin API, the keys CLI, the keys file, the gateway config), so
 * the `RateLimit-Policy` header always carries a valid structured-field integer (at most 15 digits)
 * and no limit is beyond exact arithmetic. Out of range: one clear line (or a 400 naming the field).
 */
import { stringify } from 'yaml';
import {
  budget, DEFAULT_TIERS, gatewayEnv, getWithKey, makeTempDir, removeTempDirs, runToExit, writeGatewayConfig, writeKeysFile, writeTempFile,
  randomKeyValue, type Proc,
} from '../kit/gateway-stack';
import { adminCall, readyAdminUrl } from '../kit/admin-api';
import { runKeysCli } from '../kit/keys-cli';
import type { RedisServer } from '../kit/redis-server';
import { startRedisStack, type RedisStack } from '../kit/redis-stack';

const ADMIN_TOKEN = 'admin-token-for-limit-tests-0123456789';
const MAX = 999_999_999_999_999;

let stack: RedisStack;
let redisServer: RedisServer;
let gateway: Proc;
let adminUrl: string;

beforeAll(async () => {
  stack = await startRedisStack({ backendUrl: 'http://127.0.0.1:9', gateways: [{ ADMIN_TOKEN, ADMIN_PORT: '0' }] });
  ({ redisServer, gateway } = stack);
  adminUrl = await readyAdminUrl(gateway, ADMIN_TOKEN);
}, budget(60_000));
afterAll(async () => {
  await stack?.stop();
  removeTempDirs();
});

const admin = (method: string, url: string, body: unknown) => adminCall(adminUrl, ADMIN_TOKEN, method, url, body);
const cli = (args: string[]) => runKeysCli(redisServer.url, args);

const base = { tier: 'standard', countries: ['GB'], address: '127.0.0.1' };

test('admin API: a limit beyond the bound is 400 invalid_parameter naming it; the bound itself is accepted', async () => {
  for (const [field, value] of [['per_minute', 1e308], ['per_day', 2 ** 53], ['per_month', MAX + 1], ['per_minute', 0], ['per_minute', 1.5]] as const) {
    const created = await admin('POST', '/admin/keys', { id: `too-big-${field}-${String(value).length}`, ...base, [field]: value });
    expect({ field, value, status: created.status, body: created.body }).toEqual({ field, value, status: 400, body: expect.objectContaining({ error: 'invalid_parameter', parameter: field }) });
  }
  const ok = await admin('POST', '/admin/keys', { id: 'at-bound', ...base, per_minute: MAX, per_day: MAX, per_month: MAX });
  expect(ok.status).toBe(201);
  const { key } = ok.body as { key: string };
  const patched = await admin('PATCH', '/admin/keys/at-bound', { per_day: 1e308 });
  expect(patched.status).toBe(400);
  // The header the bound produces is a valid structured-field integer (15 digits at most).
  const a = await getWithKey(gateway.url, '/v1/ping', key);
  expect(a.status).toBe(200);
  expect(String(a.headers['ratelimit-policy'])).toMatch(new RegExp(`^"minute";q=${MAX};w=60, "day";q=${MAX};w=86400, "month";q=${MAX};w=\\d+$`));
});

test('keys CLI: a limit beyond the bound exits 1 with one line', async () => {
  const r = await cli(['create', '--id', 'cli-too-big', '--tier', 'standard', '--countries', 'GB', '--address', '127.0.0.1', '--per-minute', '100000000000000000000000']);
  expect(r.code).toBe(1);
  expect(r.stderr.trim().split('\n')).toEqual([expect.stringContaining('per')]);
  expect(r.stderr).toMatch(/999999999999999|999,999,999,999,999/);
});

test('keys file and gateway config: a limit beyond the bound stops start-up with one line naming the field', async () => {
  const dir = makeTempDir();
  const keysFile = writeTempFile('keys.yaml', stringify({ keys: [{ id: 'big', key_sha256: 'a'.repeat(64), tier: 'standard', countries: ['GB'], address: '127.0.0.1', status: 'active', limits: { per_minute: 1e308 } }] }), dir);
  const fromKeys = await runToExit('gateway/main.js', gatewayEnv(keysFile, writeGatewayConfig(undefined, dir)));
  expect(fromKeys.code).toBe(1);
  expect(fromKeys.stderr.trim().split('\n')).toEqual([expect.stringMatching(/keys\.yaml: keys\[0\] \(id big\): field "limits\.per_minute"/)]);

  const config = writeTempFile('gateway.yaml', stringify({ tiers: { ...DEFAULT_TIERS, advanced: { ...DEFAULT_TIERS.advanced, per_month: 2 ** 60 } } }), makeTempDir());
  const fromConfig = await runToExit('gateway/main.js', gatewayEnv(writeKeysFile([{ id: 'k', value: randomKeyValue(), tier: 'standard', countries: ['GB'], address: '127.0.0.1', status: 'active' }], dir), config));
  expect(fromConfig.code).toBe(1);
  expect(fromConfig.stderr.trim().split('\n')).toEqual([expect.stringMatching(/gateway\.yaml.*tiers\.advanced\.per_month/)]);
});
