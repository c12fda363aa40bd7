/**
 * 429 rate_limited / quota_exceeded on every keyed endpoint, with keys whose `limits` are tiny;
 * quota outranks the per-minute limit; refused requests consume nothing; 429 comes after the
 * 401/403 checks and before 400/403-entitlement/cursor checks.
 */
import {
  awayFromMinuteEdge,
  expectError,
  expectKeyedSuccess,
  expectRetryAfter,
  randomKeyValue,
  remainingIn,
  send,
  startStack,
  type Answer,
  type KeySpec,
  type SendOptions,
  type Stack,
  expectNoKeyValueLogged,
  makeTempDir,
  startStub,
  writeTempFile,
  type Stub,
} from '../kit/gateway-stack';
import { stringify } from 'yaml';
import { fixtureListings, sampleIds } from '../fixtures/listings';

const LISTINGS = fixtureListings();
const IDS = sampleIds(LISTINGS);
const BIG = 1_000_000;

const key = (id: string, limits: KeySpec['limits'], over: Partial<KeySpec> = {}): KeySpec => ({
  id,
  value: randomKeyValue(id),
  tier: 'standard',
  countries: ['GB', 'FR'],
  address: '127.0.0.1',
  status: 'active',
  limits,
  ...over,
});

/**
 * Keyed endpoints; insights is proxied to a stub insights service answering 200 (a 503
 * not_configured would give its count back: failures are not charged).
 */
const ENDPOINTS: Array<{ name: string; path: string; tier: 'standard' | 'advanced'; ok: (a: Answer) => void }> = [
  { name: 'ping', path: '/v1/ping', tier: 'standard', ok: expectKeyedSuccess },
  { name: 'list', path: '/v1/properties?country=GB&limit=2', tier: 'standard', ok: expectKeyedSuccess },
  { name: 'item', path: `/v1/properties/${IDS.publishedGb}?country=GB`, tier: 'standard', ok: expectKeyedSuccess },
  { name: 'insights', path: '/v1/insights/market', tier: 'advanced', ok: expectKeyedSuccess },
];

const KEYS: KeySpec[] = [
  ...ENDPOINTS.flatMap((e) => [
    key(`rl-${e.name}`, { per_minute: 2, per_day: BIG, per_month: BIG }, { tier: e.tier }),
    key(`qd-${e.name}`, { per_minute: BIG, per_day: 2, per_month: BIG }, { tier: e.tier }),
    key(`qm-${e.name}`, { per_minute: BIG, per_day: BIG, per_month: 2 }, { tier: e.tier }),
  ]),
  key('both', { per_minute: 2, per_day: 2, per_month: BIG }),
  key('both-month', { per_minute: 2, per_day: BIG, per_month: 2 }),
  key('refused-minute', { per_minute: 3, per_day: 4, per_month: BIG }),
  key('refused-day', { per_minute: 10, per_day: 3, per_month: BIG }),
  key('pre-upgrade', { per_minute: 2, per_day: BIG, per_month: BIG }),
  key('pre-ip', { per_minute: 2, per_day: BIG, per_month: BIG }, { address: '127.0.0.2' }),
  key('pre-paused', { per_minute: 2, per_day: BIG, per_month: BIG }, { status: 'paused', pause_reason: 'payment_dispute' }),
  key('exhausted', { per_minute: 1, per_day: BIG, per_month: BIG }),
  key('exhausted-quota', { per_minute: BIG, per_day: 1, per_month: BIG }),
  key('burst', { per_minute: 5, per_day: BIG, per_month: BIG }),
  key('burst-quota', { per_minute: BIG, per_day: 4, per_month: BIG }),
  key('tier-default', undefined),
  key('partial', { per_minute: 7 }),
  key('headers-paused', { per_minute: 9, per_day: BIG, per_month: BIG }, { status: 'paused', pause_reason: 'unpaid_renewal' }),
  key('headers-bad-param', { per_minute: 9, per_day: BIG, per_month: BIG }),
];

let stack: Stack;
let insightsStub: Stub;
const getAs = (keyId: string, path: string, options: SendOptions = {}): Promise<Answer> =>
  send(stack.url, path, { ...options, headers: { 'x-api-key': stack.key(keyId).value, ...options.headers } });

beforeAll(async () => {
  insightsStub = await startStub((_req, res) => {
    res.setHeader('content-type', 'application/json');
    res.end('{"market":"steady"}');
  });
  const tiers = {
    standard: { per_minute: 50, per_day: 5000, per_month: 90000 },
    advanced: { per_minute: 500, per_day: 50000, per_month: 900000 },
  };
  const gatewayConfig = writeTempFile('gateway.yaml', stringify({ tiers, insights: { upstream: insightsStub.url } }), makeTempDir());
  stack = await startStack({ keys: KEYS, listings: LISTINGS, listingsFormat: 'ndjson', tiers, gateways: [{ GATEWAY_CONFIG: gatewayConfig }] });
});
afterAll(async () => {
  await stack?.stop();
  await insightsStub?.close();
});

beforeEach(async () => {
  // Every test below stays well inside one UTC minute.
  await awayFromMinuteEdge();
});

describe.each(ENDPOINTS)('$name ($path)', ({ name, path, ok }) => {
  test('per-minute limit: two answers, then 429 rate_limited with Retry-After ≤ 60', async () => {
    const first = await getAs(`rl-${name}`, path);
    ok(first);
    expect(remainingIn(first, 'minute')).toBe(1);
    ok(await getAs(`rl-${name}`, path));
    for (let i = 0; i < 3; i++) {
      const refused = await getAs(`rl-${name}`, path);
      expectError(refused, 'rate_limited');
      expect(expectRetryAfter(refused)).toBeLessThanOrEqual(60);
    }
  });

  test('daily quota: two answers, then 429 quota_exceeded with Retry-After ≤ one day', async () => {
    ok(await getAs(`qd-${name}`, path));
    ok(await getAs(`qd-${name}`, path));
    const refused = await getAs(`qd-${name}`, path);
    expectError(refused, 'quota_exceeded');
    expect(expectRetryAfter(refused)).toBeLessThanOrEqual(86_400);
  });

  test('monthly quota: two answers, then 429 quota_exceeded with Retry-After ≤ 31 days', async () => {
    ok(await getAs(`qm-${name}`, path));
    ok(await getAs(`qm-${name}`, path));
    const refused = await getAs(`qm-${name}`, path);
    expectError(refused, 'quota_exceeded');
    expect(expectRetryAfter(refused)).toBeLessThanOrEqual(31 * 86_400);
  });
});

describe('quota outranks the per-minute limit', () => {
  test('per-minute and daily both exhausted → quota_exceeded', async () => {
    expectKeyedSuccess(await getAs('both', '/v1/ping'));
    expectKeyedSuccess(await getAs('both', '/v1/ping'));
    expectError(await getAs('both', '/v1/ping'), 'quota_exceeded');
    expectError(await getAs('both', '/v1/ping'), 'quota_exceeded');
  });

  test('per-minute and monthly both exhausted → quota_exceeded', async () => {
    expectKeyedSuccess(await getAs('both-month', '/v1/ping'));
    expectKeyedSuccess(await getAs('both-month', '/v1/ping'));
    expectError(await getAs('both-month', '/v1/ping'), 'quota_exceeded');
  });
});

describe('a refused request consumes nothing', () => {
  test('per_minute 3, per_day 4: three 200s, then rate_limited, and the day still has 1 left', async () => {
    for (let i = 0; i < 3; i++) expectKeyedSuccess(await getAs('refused-minute', '/v1/ping'));
    for (let i = 0; i < 4; i++) {
      const refused = await getAs('refused-minute', '/v1/ping');
      expectError(refused, 'rate_limited');
      expect(remainingIn(refused, 'day')).toBe(1);
    }
  });

  test('per_minute 10, per_day 3: three 200s, then quota_exceeded, and the minute still has 7 left', async () => {
    for (let i = 0; i < 3; i++) expectKeyedSuccess(await getAs('refused-day', '/v1/properties?country=GB&limit=1'));
    for (let i = 0; i < 4; i++) {
      const refused = await getAs('refused-day', '/v1/properties?country=GB&limit=1');
      expectError(refused, 'quota_exceeded');
      expect(remainingIn(refused, 'minute')).toBe(7);
      expect(remainingIn(refused, 'day')).toBe(0);
    }
  });
});

describe('concurrent requests never overshoot a limit', () => {
  test('12 parallel requests, per_minute 5: exactly five answered', async () => {
    const answers = await Promise.all(Array.from({ length: 12 }, () => getAs('burst', '/v1/properties?country=GB&limit=1')));
    expect(answers.filter((a) => a.status === 200)).toHaveLength(5);
    for (const a of answers.filter((x) => x.status !== 200)) expectError(a, 'rate_limited');
  });

  test('10 parallel requests, per_day 4: exactly four answered', async () => {
    const answers = await Promise.all(Array.from({ length: 10 }, () => getAs('burst-quota', '/v1/ping')));
    expect(answers.filter((a) => a.status === 200)).toHaveLength(4);
    for (const a of answers.filter((x) => x.status !== 200)) expectError(a, 'quota_exceeded');
  });
});

describe('answers refused before the limit step count nothing', () => {
  test('upgrade_required does not count', async () => {
    for (let i = 0; i < 5; i++) expectError(await getAs('pre-upgrade', '/v1/insights'), 'upgrade_required');
    expectKeyedSuccess(await getAs('pre-upgrade', '/v1/ping'));
    expectKeyedSuccess(await getAs('pre-upgrade', '/v1/ping'));
    expectError(await getAs('pre-upgrade', '/v1/ping'), 'rate_limited');
  });

  test('ip_not_allowed does not count', async () => {
    for (let i = 0; i < 5; i++) expectError(await getAs('pre-ip', '/v1/ping'), 'ip_not_allowed', { ip: '127.0.0.1' });
    expectKeyedSuccess(await getAs('pre-ip', '/v1/ping', { localAddress: '127.0.0.2' }));
    expectKeyedSuccess(await getAs('pre-ip', '/v1/ping', { localAddress: '127.0.0.2' }));
    expectError(await getAs('pre-ip', '/v1/ping', { localAddress: '127.0.0.2' }), 'rate_limited');
  });

  test('a paused key is key_paused, never 429', async () => {
    for (let i = 0; i < 5; i++) expectError(await getAs('pre-paused', '/v1/ping'), 'key_paused');
  });
});

describe('order: 429 after 401/403 identity checks, before parameters, entitlement and cursor', () => {
  test('an exhausted per-minute limit', async () => {
    expectKeyedSuccess(await getAs('exhausted', '/v1/ping'));
    expectError(await getAs('exhausted', '/v1/properties?country=GB&limit=0'), 'rate_limited');
    expectError(await getAs('exhausted', '/v1/properties?country=GB&foo=1'), 'rate_limited');
    expectError(await getAs('exhausted', '/v1/properties?country=DE'), 'rate_limited');
    expectError(await getAs('exhausted', '/v1/properties?country=GB&cursor=garbage'), 'rate_limited');
    expectError(await getAs('exhausted', `/v1/properties/${IDS.withdrawnGb}?country=GB`), 'rate_limited');
    expectError(await getAs('exhausted', '/v1/properties/x?country=GB&limit=1'), 'rate_limited');
    // Identity checks come first.
    expectError(await getAs('exhausted', '/v1/insights'), 'upgrade_required');
    expectError(await getAs('exhausted', '/v1/ping', { localAddress: '127.0.0.2' }), 'ip_not_allowed', { ip: '127.0.0.2' });
    // Path and method come before everything.
    expectError(await getAs('exhausted', '/v1/ping', { method: 'POST' }), 'method_not_allowed');
    expectError(await getAs('exhausted', '/v1/nothing'), 'not_found');
  });

  test('an exhausted quota', async () => {
    expectKeyedSuccess(await getAs('exhausted-quota', '/v1/ping'));
    expectError(await getAs('exhausted-quota', '/v1/properties?country=XX'), 'quota_exceeded');
    expectError(await getAs('exhausted-quota', '/v1/properties?country=DE&cursor=zz'), 'quota_exceeded');
  });
});

describe('refusals of an identified key carry its RateLimit headers', () => {
  test('refused before the limit step (key_paused): the state read without counting, the same each time', async () => {
    for (let i = 0; i < 3; i++) {
      const refused = await getAs('headers-paused', '/v1/ping');
      expectError(refused, 'key_paused');
      expect(refused.headers['ratelimit-policy']).toContain('"minute";q=9;w=60');
      expect(remainingIn(refused, 'minute')).toBe(9);
    }
  });

  test('refused after it (invalid_parameter): the headers of the counted request, one fewer each time', async () => {
    for (let i = 1; i <= 3; i++) {
      const refused = await getAs('headers-bad-param', '/v1/properties?country=GB&colour=red');
      expectError(refused, 'invalid_parameter', { parameter: 'colour' });
      expect(remainingIn(refused, 'minute')).toBe(9 - i);
    }
  });
});

describe('limits come from the tier unless the key overrides them', () => {
  test('tier defaults and a partial override', async () => {
    const a = await getAs('tier-default', '/v1/ping');
    expectKeyedSuccess(a);
    expect(remainingIn(a, 'minute')).toBe(49);
    expect(remainingIn(a, 'day')).toBe(4999);
    expect(remainingIn(a, 'month')).toBe(89999);
    const b = await getAs('partial', '/v1/ping');
    expectKeyedSuccess(b);
    expect(remainingIn(b, 'minute')).toBe(6);
    expect(remainingIn(b, 'day')).toBe(4999);
  });
});

describe('logs', () => {
  test('no gateway log line contains a key value', async () => {
    await expectNoKeyValueLogged(stack);
  });
});
