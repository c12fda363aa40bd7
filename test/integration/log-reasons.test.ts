/**
 * Logs that answer tickets: every refusal line says why (`reason`, never in the answer), names the
 * key whenever a record was found (revoked, grace over, paused...), the quota window, the upstream
 * failure kind, and which value of a rolled key authenticated. Levels by name and one ISO time
 * format in both services.
 */
import { stringify } from 'yaml';
import {
  awayFromMinuteEdge, makeTempDir, randomKeyValue, removeTempDirs, send, sha256Hex, eventually, startBackend, startGateway, writeGatewayConfig, writeListingsFile,
  writeTempFile, type Answer, type Proc,
} from '../kit/gateway-stack';
import { startStubUpstream, type StubUpstream } from '../kit/stub-upstream';
import { accessLineOf, type AccessLine } from '../kit/log-lines';

const V = {
  gb: randomKeyValue('gb'),
  revoked: randomKeyValue('revoked'),
  paused: randomKeyValue('paused'),
  rolledNew: randomKeyValue('rolled-new'),
  rolledOld: randomKeyValue('rolled-old'),
  expiredNew: randomKeyValue('expired-new'),
  expiredOld: randomKeyValue('expired-old'),
  elsewhere: randomKeyValue('elsewhere'),
  daily: randomKeyValue('daily'),
  minute: randomKeyValue('minute'),
};
const entry = (id: string, value: string, extra: Record<string, unknown> = {}) => ({
  id, key_sha256: sha256Hex(value), tier: 'standard', countries: ['GB'], address: '127.0.0.1', status: 'active', ...extra,
});

let stub: StubUpstream;
let gateway: Proc;
let sequence = 0;

beforeAll(async () => {
  stub = await startStubUpstream();
  const dir = makeTempDir();
  const keysFile = writeTempFile('keys.yaml', stringify({
    keys: [
      entry('gb', V.gb),
      entry('revoked', V.revoked, { status: 'revoked' }),
      entry('paused', V.paused, { status: 'paused', pause_reason: 'payment_dispute' }),
      entry('rolled', V.rolledNew, { previous_key_sha256: sha256Hex(V.rolledOld), previous_key_expires_at: new Date(Date.now() + 3_600_000).toISOString() }),
      entry('expired', V.expiredNew, { previous_key_sha256: sha256Hex(V.expiredOld), previous_key_expires_at: new Date(Date.now() - 60_000).toISOString() }),
      entry('elsewhere', V.elsewhere, { address: '203.0.113.7' }),
      entry('daily', V.daily, { limits: { per_day: 1 } }),
      entry('minute', V.minute, { limits: { per_minute: 1 } }),
    ],
  }), dir);
  gateway = await startGateway({ backendUrl: stub.url, keysFile, gatewayConfig: writeGatewayConfig(undefined, dir), env: { UPSTREAM_TIMEOUT_MS: '2000' } });
});

afterAll(async () => {
  await gateway?.stop();
  await stub?.close();
  removeTempDirs();
});

/** Sends a request and returns its answer and its log line. */
async function logged(path: string, key?: string): Promise<{ answer: Answer; line: AccessLine }> {
  const id = `log-reason-${++sequence}`;
  const answer = await send(gateway.url, path, { headers: { 'x-request-id': id, ...(key ? { 'x-api-key': key } : {}) } });
  const line = await eventually(`the log line of ${id}`, () => accessLineOf(gateway.output, id), { timeoutMs: 5000, intervalMs: 20 });
  return { answer, line };
}

test.each([
  ['no key', '/v1/ping', undefined, { error: 'unauthenticated', reason: 'no_key' }, []],
  ['unknown key', '/v1/ping', randomKeyValue('unknown'), { error: 'unauthenticated', reason: 'unknown_key' }, ['key_id']],
  ['revoked key', '/v1/ping', V.revoked, { error: 'unauthenticated', reason: 'revoked', key_id: 'revoked' }, []],
  ['previous value after its grace', '/v1/ping', V.expiredOld, { error: 'unauthenticated', reason: 'expired_grace', key_id: 'expired' }, []],
  ['another address', '/v1/ping', V.elsewhere, { error: 'ip_not_allowed', reason: 'address_not_registered', key_id: 'elsewhere' }, []],
  ['paused key', '/v1/ping', V.paused, { error: 'key_paused', reason: 'paused_payment_dispute', key_id: 'paused' }, []],
  ['Standard key on insights', '/v1/insights/x', V.gb, { error: 'upgrade_required', reason: 'tier_standard', key_id: 'gb' }, []],
  ['country outside the subscription', '/v1/properties?country=FR', V.gb, { error: 'country_not_entitled', reason: 'country_FR_not_in_subscription', key_id: 'gb' }, []],
  ['bad parameter', '/v1/properties?country=GB&limit=0', V.gb, { error: 'invalid_parameter', reason: 'parameter_limit', key_id: 'gb' }, []],
  ['bad cursor', '/v1/properties?country=GB&cursor=abc', V.gb, { error: 'invalid_cursor', reason: 'cursor_malformed', key_id: 'gb' }, []],
  ['unknown path', '/v1/nowhere', V.gb, { error: 'not_found', reason: 'unknown_path' }, ['key_id']],
])('%s: the log line says why, the answer does not', async (_label, path, key, expected, absent) => {
  const { answer, line } = await logged(path, key);
  expect(line).toMatchObject(expected);
  for (const field of absent) expect(line).not.toHaveProperty(field);
  expect(Object.keys(answer.body as object)).not.toContain('reason');
  expect(answer.text).not.toContain(String(expected.reason));
});

test('quota and limit refusals name their window', async () => {
  expect((await logged('/v1/ping', V.daily)).answer.status).toBe(200);
  expect((await logged('/v1/ping', V.daily)).line).toMatchObject({ error: 'quota_exceeded', reason: 'day_quota', window: 'day', key_id: 'daily' });
  // The day's quota is far away: the second request in one minute is refused by the minute.
  await awayFromMinuteEdge();
  expect((await logged('/v1/ping', V.minute)).answer.status).toBe(200);
  expect((await logged('/v1/ping', V.minute)).line).toMatchObject({ error: 'rate_limited', reason: 'minute_limit', window: 'minute', key_id: 'minute' });
});

test('a rolled key logs which value authenticated', async () => {
  expect((await logged('/v1/ping', V.rolledNew)).line).toMatchObject({ res: { statusCode: 200 }, key_id: 'rolled', key_value: 'current' });
  expect((await logged('/v1/ping', V.rolledOld)).line).toMatchObject({ res: { statusCode: 200 }, key_id: 'rolled', key_value: 'previous' });
});

test('data service failures name their kind', async () => {
  stub.mode = 'reset';
  expect((await logged('/v1/properties?country=GB', V.gb)).line).toMatchObject({ res: { statusCode: 503 }, level: 'error', reason: 'upstream_unreachable', upstream: 'unreachable' });
  stub.mode = '500-stack';
  expect((await logged('/v1/properties?country=GB', V.gb)).line).toMatchObject({ res: { statusCode: 500 }, level: 'error', reason: 'upstream_server_error', upstream: 'server_error' });
  stub.mode = 'non-json';
  expect((await logged('/v1/properties?country=GB', V.gb)).line).toMatchObject({ res: { statusCode: 500 }, level: 'error', reason: 'upstream_unreadable', upstream: 'unreadable' });
  stub.mode = 'ok';
});

test('both services write level names and epoch-millisecond times', async () => {
  const backend = await startBackend(writeListingsFile([], 'json', makeTempDir()));
  try {
    for (const lines of [gateway.output, backend.output]) {
      const json = lines.filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as { level: unknown; time: unknown });
      expect(json.length).toBeGreaterThan(0);
      for (const l of json) {
        expect(['trace', 'debug', 'info', 'warn', 'error', 'fatal']).toContain(l.level);
        expect(Number.isSafeInteger(l.time)).toBe(true);
        expect(Math.abs((l.time as number) - Date.now())).toBeLessThan(3_600_000);
      }
    }
  } finally {
    await backend.stop();
  }
});

test("the access line has pino-http's req/res/responseTime shape, no headers, the gateway's fields beside", async () => {
  const { answer, line } = await logged('/v1/properties?country=GB&cursor=abc', V.gb);
  expect(answer.status).toBe(400);
  expect(line).toEqual({
    level: 'info',
    time: expect.any(Number),
    service: 'gateway',
    req: { id: expect.stringMatching(/^log-reason-/), method: 'GET', url: '/v1/properties?country=GB&cursor=[redacted]', remoteAddress: '127.0.0.1' },
    res: { statusCode: 400 },
    responseTime: expect.any(Number),
    key_id: 'gb',
    key_value: 'current',
    error: 'invalid_cursor',
    reason: 'cursor_malformed',
    msg: 'answered',
  });
  expect(JSON.stringify(line)).not.toContain('headers');
  expect(JSON.stringify(line)).not.toContain(V.gb);
});
