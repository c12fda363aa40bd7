/**
 * Usage history across three gateway instances on one real redis-server: exact accepted counts per
 * day, refusals by code once flushed, monthly totals; the admin API (JSON and CSV) and the keys CLI
 * read the same numbers; the Redis store rolls a day and a month (days passed in) and keeps each
 * month's record 26 months; a graceful stop flushes what the instance still held.
 */
import { readyAdminUrl } from '../kit/admin-api';
import type Redis from 'ioredis';
import {
  awayFromMinuteEdge, budget, cursorSecret, getWithKey, removeTempDirs, type Proc,
} from '../kit/gateway-stack';
import { loadGatewayConfig } from '../../gateway/config/gateway-config';
import { createKeyAdmin } from '../../gateway/keys/key-admin';
import { createRedisUsageStore, usageKeys } from '../../gateway/usage/redis-usage-store';
import { dailyUsage, monthlyReport } from '../../gateway/usage/usage-reports';
import { runKeysCli } from '../kit/keys-cli';
import type { RedisServer } from '../kit/redis-server';
import { startRedisStack, type RedisStack } from '../kit/redis-stack';
import { adminConformingFetch } from '../kit/openapi-conformance';

/** Every admin answer is checked against openapi/admin.yaml (a departure throws). */
const adminFetch = adminConformingFetch();

const ADMIN_TOKEN = 'admin-token-for-tests-0123456789';
const today = (): string => new Date().toISOString().slice(0, 10);

let redisServer: RedisServer;
let redis: Redis;
let stack: RedisStack;
let gateways: Proc[] = [];
let adminUrl: string;
let keyAdmin: ReturnType<typeof createKeyAdmin>;
let gatewayConfig: string;
const secret = cursorSecret();

const cli = (args: string[]) => runKeysCli(redisServer.url, args, { GATEWAY_CONFIG: gatewayConfig });

const admin = (url: string, headers: Record<string, string> = {}) =>
  adminFetch(`${adminUrl}${url}`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}`, ...headers } });

beforeAll(async () => {
  stack = await startRedisStack({
    cursorSecret: secret,
    env: { REDIS_COMMAND_TIMEOUT_MS: '3000', USAGE_FLUSH_MS: '200' },
    gateways: [{ ADMIN_TOKEN, ADMIN_PORT: '0' }, {}, {}],
  });
  ({ redisServer, redis, gatewayConfig } = stack);
  gateways = [...stack.gateways];
  keyAdmin = createKeyAdmin(redis, loadGatewayConfig(gatewayConfig));
  adminUrl = await readyAdminUrl(gateways[0]!, ADMIN_TOKEN);
}, budget(60_000));

afterAll(async () => {
  await stack?.stop();
  removeTempDirs();
});

const create = async (id: string, extra: Record<string, unknown> = {}): Promise<string> =>
  (await keyAdmin.create({ id, tier: 'standard', countries: ['GB'], address: '127.0.0.1', ...extra })).key;

/** Polls the admin API until the key's day equals `expected` (flushes run every 200 ms). */
async function dayOnceFlushed(id: string, expected: unknown): Promise<unknown> {
  const deadline = Date.now() + 15_000;
  let last: unknown;
  while (Date.now() < deadline) {
    const answer = await admin(`/admin/keys/${id}/usage/daily?from=${today()}&to=${today()}`);
    expect(answer.status).toBe(200);
    last = ((await answer.json()) as { days: unknown[] }).days[0];
    if (JSON.stringify(last) === JSON.stringify(expected)) return last;
    await new Promise((r) => setTimeout(r, 100));
  }
  return last;
}

describe('usage history across three instances', () => {
  it('exact accepted counts and refusals by code, read by the admin API, the report (JSON and CSV) and the CLI', async () => {
    await awayFromMinuteEdge(15_000);
    const main = await create('hist-main');
    const limited = await create('hist-limited', { per_minute: 4 });
    const paused = await create('hist-paused');
    await keyAdmin.pause('hist-paused', 'unpaid_renewal');
    const elsewhere = await create('hist-ip', { address: '10.9.8.7' });

    const plan: Array<[string, string, number]> = [
      // key value, path, how many per instance
      [main, '/v1/ping', 10],
      [main, '/v1/ping?unexpected=1', 2], // invalid_parameter (after the limit step)
      [main, '/v1/properties?country=FR', 1], // country_not_entitled
      [main, '/v1/properties?country=GB&cursor=not-a-cursor', 1], // invalid_cursor
      [main, '/v1/insights/prices', 1], // upgrade_required
      [paused, '/v1/ping', 2], // key_paused
      [elsewhere, '/v1/ping', 1], // ip_not_allowed
    ];
    const answers = await Promise.all(
      gateways.flatMap((g) => plan.flatMap(([value, p, n]) => Array.from({ length: n }, () => getWithKey(g.url, p, value)))),
    );
    expect(answers.filter((a) => a.status === 200)).toHaveLength(30);
    // 10 requests over the three instances against a per-minute limit of 4.
    const limitedAnswers = await Promise.all(Array.from({ length: 10 }, (_, i) => getWithKey(gateways[i % 3]!.url, '/v1/ping', limited)));
    expect(limitedAnswers.filter((a) => a.status === 200)).toHaveLength(4);

    const mainDay = { date: today(), accepted: 30, refused: { invalid_parameter: 6, country_not_entitled: 3, invalid_cursor: 3, upgrade_required: 3 } };
    expect(await dayOnceFlushed('hist-main', mainDay)).toEqual(mainDay);
    expect(await dayOnceFlushed('hist-limited', { date: today(), accepted: 4, refused: { rate_limited: 6 } })).toEqual({ date: today(), accepted: 4, refused: { rate_limited: 6 } });
    expect(await dayOnceFlushed('hist-paused', { date: today(), accepted: 0, refused: { key_paused: 6 } })).toEqual({ date: today(), accepted: 0, refused: { key_paused: 6 } });
    expect(await dayOnceFlushed('hist-ip', { date: today(), accepted: 0, refused: { ip_not_allowed: 3 } })).toEqual({ date: today(), accepted: 0, refused: { ip_not_allowed: 3 } });

    // The contract's identity: the day's quota use is accepted plus the refusals after the limit step.
    const counted = Number(await redis.get((await redis.keys('lgw:{hist-main}:day:*'))[0]!));
    expect(counted).toBe(30 + 6 + 3 + 3);

    const month = today().slice(0, 7);
    const report = (await (await admin(`/admin/reports/monthly?month=${month}`)).json()) as { month: string; keys: Array<{ key_id: string; accepted: number; refused: Record<string, number> }> };
    expect(report.month).toBe(month);
    const row = (id: string) => report.keys.find((k) => k.key_id === id);
    expect(row('hist-main')).toEqual({ key_id: 'hist-main', accepted: 30, refused: mainDay.refused });
    expect(row('hist-limited')?.accepted).toBe(4);

    const csvAnswer = await admin(`/admin/reports/monthly?month=${month}`, { accept: 'text/csv' });
    expect(csvAnswer.status).toBe(200);
    expect(csvAnswer.headers.get('content-type')).toMatch(/^text\/csv/);
    const csv = await csvAnswer.text();
    const [header, ...rows] = csv.trimEnd().split('\r\n').map((l) => l.split(','));
    expect(header!.join(',')).toMatch(/^key_id,accepted,/);
    const col = (name: string) => header!.indexOf(name);
    const csvRow = (id: string) => rows.find((r) => r[0] === id)!;
    expect(csvRow('hist-main')[col('accepted')]).toBe('30');
    expect(csvRow('hist-main')[col('refused_invalid_parameter')]).toBe('6');
    expect(csvRow('hist-paused')[col('refused_key_paused')]).toBe('6');
    expect(rows.reduce((a, r) => a + Number(r[1]), 0)).toBe(report.keys.reduce((a, k) => a + k.accepted, 0));

    const table = await cli(['usage', 'hist-main', '--days', '3']);
    expect(table.code).toBe(0);
    const todayLine = table.stdout.split('\n').find((l) => l.startsWith(today()))!;
    expect(todayLine.split(/\s+/).slice(0, 3)).toEqual([today(), '30', '15']);
    expect(table.stdout.split('\n').filter((l) => /^\d{4}-\d{2}-\d{2}/.test(l))).toHaveLength(3);
    const cliCsv = await cli(['report', '--month', month, '--csv']);
    expect(cliCsv.code).toBe(0);
    expect(cliCsv.stdout).toBe(csv);
    const cliTable = await cli(['report', '--month', month]);
    expect(cliTable.stdout).toMatch(/hist-main\s+30\s+15/);
  });

  it('refuses bad parameters with 400 naming them, an unknown key with 404, and a bad --days or --month in the CLI', async () => {
    const expectError = async (url: string, status: number, error: string, parameter?: string) => {
      const a = await admin(url);
      expect(a.status).toBe(status);
      const body = (await a.json()) as { error: string; parameter?: string };
      expect(body.error).toBe(error);
      if (parameter) expect(body.parameter).toBe(parameter);
    };
    await expectError('/admin/keys/hist-main/usage/daily?from=2026-02-30', 400, 'invalid_parameter', 'from');
    await expectError('/admin/keys/hist-main/usage/daily?from=2020-01-01&to=2026-01-01', 400, 'invalid_parameter', 'from');
    await expectError('/admin/keys/hist-main/usage/daily?days=3', 400, 'invalid_parameter', 'days');
    await expectError('/admin/keys/no-such-key/usage/daily', 404, 'not_found');
    await expectError('/admin/reports/monthly', 400, 'invalid_parameter', 'month');
    await expectError('/admin/reports/monthly?month=2026-13', 400, 'invalid_parameter', 'month');
    const post = await adminFetch(`${adminUrl}/admin/reports/monthly?month=2026-11`, { method: 'POST', headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    expect(post.status).toBe(405);
    expect((await adminFetch(`${adminUrl}/admin/reports/monthly?month=2026-11`)).status).toBe(401);

    const badDays = await cli(['usage', 'hist-main', '--days', 'ten']);
    expect(badDays.code).toBe(1);
    expect(badDays.stderr).toMatch(/^keys: --days must be a whole number/);
    const badMonth = await cli(['report', '--month', 'November']);
    expect(badMonth.code).toBe(1);
    expect(badMonth.stderr).toMatch(/^keys: report needs --month YYYY-MM/);
  });
});

describe('the Redis history store', () => {
  it('rolls a day and a month (days passed in), adds concurrent writers up, and keeps a month 26 months', async () => {
    const store = createRedisUsageStore(redis);
    await Promise.all([
      store.add([{ keyId: 'roll', day: '2026-11-30', field: 'accepted', count: 5 }, { keyId: 'roll', day: '2026-11-30', field: 'quota_exceeded', count: 2 }]),
      store.add([{ keyId: 'roll', day: '2026-11-30', field: 'accepted', count: 1 }, { keyId: 'roll', day: '2026-12-01', field: 'accepted', count: 3 }]),
    ]);
    expect((await dailyUsage(store, 'roll', '2026-11-29', '2026-12-01')).days).toEqual([
      { date: '2026-11-29', accepted: 0, refused: {} },
      { date: '2026-11-30', accepted: 6, refused: { quota_exceeded: 2 } },
      { date: '2026-12-01', accepted: 3, refused: {} },
    ]);
    expect((await monthlyReport(store, '2026-11')).keys.filter((k) => k.key_id === 'roll')).toEqual([{ key_id: 'roll', accepted: 6, refused: { quota_exceeded: 2 } }]);
    expect((await monthlyReport(store, '2026-12')).keys.filter((k) => k.key_id === 'roll')).toEqual([{ key_id: 'roll', accepted: 3, refused: {} }]);
    expect(await redis.pexpiretime(usageKeys.month('roll', '2026-11'))).toBe(Date.UTC(2029, 0, 1));
    expect(await redis.pexpiretime(usageKeys.index('2026-12'))).toBe(Date.UTC(2029, 1, 1));
  });
});

describe('a graceful stop', () => {
  it('flushes what the instance still held', async () => {
    const value = await create('hist-stop');
    const slow = await stack.startGateway({ USAGE_FLUSH_MS: '600000' });
    for (let i = 0; i < 7; i++) expect((await getWithKey(slow.url, '/v1/ping', value)).status).toBe(200);
    expect(await redis.exists(usageKeys.month('hist-stop', today().slice(0, 7)))).toBe(0);
    expect(await slow.stop('SIGTERM')).toBe(0);
    expect(await redis.hget(usageKeys.month('hist-stop', today().slice(0, 7)), today().slice(8))).toBe('7');
  });
});
