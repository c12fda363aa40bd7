/**
 * The order of checks (README, "The surface"), walked through an in-process
 * gateway with the memory twins (test/kit/in-process.ts): unknown path 404, method 405, then 401
 * `unauthenticated`, 403 `ip_not_allowed`, 403 `key_paused`, 403 `upgrade_required`, 429
 * `rate_limited` / `quota_exceeded`, 400 `invalid_parameter`, 403 `country_not_entitled`, 400
 * `invalid_cursor`, then the data service (404 `not_found`, 503). Each step is shown twice: it wins
 * over every later refusal that also applies, and it gives way to the earlier one. A refusal made
 * before the data service never calls it. Two checks sit outside the list: a key pasted into the
 * path is refused 404 right after the key is known, and an address over its budget of refused
 * authentications gets 429 before any key is looked at (but after the path and method checks).
 */
import { expectError, expectKeyedSuccess, randomKeyValue, removeTempDirs, send, UNLIMITED, type KeySpec } from '../kit/gateway-stack';
import { buildGateway, type InProcessGateway } from '../kit/in-process';
import { MID_MINUTE_MS, testClock } from '../kit/test-clock';

const key = (id: string, over: Partial<KeySpec> = {}): KeySpec => ({
  id, value: randomKeyValue(id), tier: 'standard', countries: ['GB', 'FR'], address: '127.0.0.1', status: 'active', limits: UNLIMITED, ...over,
});
const KEYS = {
  good: key('good'),
  advanced: key('advanced', { tier: 'advanced' }),
  revoked: key('revoked', { status: 'revoked' }),
  expired: key('expired', { expires_at: '2020-01-01T00:00:00Z' }),
  /** From another address and paused: the address is checked first. */
  elsewherePaused: key('elsewhere-paused', { address: '10.9.9.9', status: 'paused', pause_reason: 'unpaid_renewal' }),
  /** Paused, Standard, its quota spent: paused is said before the tier and the limits. */
  pausedSpent: key('paused-spent', { status: 'paused', pause_reason: 'payment_dispute', limits: { per_minute: 1, per_day: 1, per_month: 1 } }),
  /** Standard with its daily quota spent: the tier is said before the quota; the quota before the query. */
  daySpent: key('day-spent', { limits: { per_minute: 1000, per_day: 1, per_month: 1000 } }),
  /** Per-minute limit and daily quota both spent: `quota_exceeded`. */
  bothSpent: key('both-spent', { limits: { per_minute: 1, per_day: 1, per_month: 1000 } }),
  /** Only the per-minute limit spent: `rate_limited`. */
  minuteSpent: key('minute-spent', { limits: { per_minute: 1, per_day: 1000, per_month: 1000 } }),
};
const CURSOR = 'not-a-cursor';

let gw: InProcessGateway;
const get = (path: string, k?: KeySpec, method = 'GET') => send(gw.url, path, { method, headers: k ? { 'x-api-key': k.value } : {} });

/** Asserts the answer and that the data service was (not) called for it. */
async function refused(path: string, k: KeySpec | undefined, code: Parameters<typeof expectError>[1], extras: Record<string, unknown> = {}, method = 'GET'): Promise<void> {
  const callsBefore = gw.listings.calls;
  expectError(await get(path, k, method), code, extras);
  expect({ path, dataServiceCalls: gw.listings.calls - callsBefore }).toEqual({ path, dataServiceCalls: 0 });
}

beforeAll(async () => {
  // The gateway's clock stands still mid-minute: the spent windows stay spent for the whole suite.
  gw = await buildGateway({ keys: Object.values(KEYS), clock: testClock() });
  // Spend the limits: one counted request each (the paused key's counters are spent directly).
  for (const k of [KEYS.daySpent, KEYS.bothSpent, KEYS.minuteSpent]) expectKeyedSuccess(await get('/v1/ping', k));
  gw.counters.consume('paused-spent', { perMinute: 1, perDay: 1, perMonth: 1 });
});
afterAll(async () => {
  await gw?.close();
  removeTempDirs();
});

test('404 unknown path comes before 405 method, and both before any key check', async () => {
  await refused('/v1/no-such-thing', undefined, 'not_found', {}, 'POST');
  await refused('/v1/ping', undefined, 'method_not_allowed', {}, 'POST');
  await refused('/v1/ping', KEYS.revoked, 'method_not_allowed', {}, 'DELETE');
  await refused('/v1/no-such-thing', undefined, 'not_found');
});

test('401 unauthenticated: no key, unknown, revoked or expired; before the address is looked at', async () => {
  await refused('/v1/ping', undefined, 'unauthenticated');
  await refused('/v1/properties?country=XX&limit=0', { ...KEYS.good, value: randomKeyValue('unknown') }, 'unauthenticated');
  await refused('/v1/ping', KEYS.revoked, 'unauthenticated');
  await refused('/v1/insights', KEYS.expired, 'unauthenticated');
});

test('a key pasted into the path is 404 right after the key is known (before its address is checked)', async () => {
  await refused(`/v1/properties/${KEYS.elsewherePaused.value}?country=GB`, KEYS.elsewherePaused, 'not_found');
  await refused(`/v1/properties/${KEYS.good.value}?country=GB`, KEYS.good, 'not_found');
});

test('403 ip_not_allowed (with the address seen) before key_paused', async () => {
  await refused('/v1/ping', KEYS.elsewherePaused, 'ip_not_allowed', { ip: '127.0.0.1' });
  await refused('/v1/properties?country=DE&limit=0', KEYS.elsewherePaused, 'ip_not_allowed', { ip: '127.0.0.1' });
});

test('403 key_paused before upgrade_required, before the limits and the query', async () => {
  await refused('/v1/insights', KEYS.pausedSpent, 'key_paused');
  await refused('/v1/properties?country=DE&limit=0', KEYS.pausedSpent, 'key_paused');
});

test('403 upgrade_required before the limits; an Advanced key goes on to the area (503 not_configured)', async () => {
  await refused('/v1/insights', KEYS.daySpent, 'upgrade_required');
  await refused('/v1/insights/anything?x=1', KEYS.good, 'upgrade_required');
  await refused('/v1/insights', KEYS.advanced, 'not_configured');
});

test('429 before invalid_parameter; quota_exceeded wins over rate_limited when both are spent', async () => {
  await refused('/v1/properties?country=DE&limit=0', KEYS.daySpent, 'quota_exceeded');
  await refused('/v1/properties?country=GB&bogus=1', KEYS.bothSpent, 'quota_exceeded');
  await refused('/v1/ping?unexpected=1', KEYS.minuteSpent, 'rate_limited');
});

test('400 invalid_parameter before country_not_entitled', async () => {
  await refused('/v1/properties?country=DE&limit=0', KEYS.good, 'invalid_parameter', { parameter: 'limit' });
  await refused(`/v1/properties?country=DE&cursor=${CURSOR}&cursor=${CURSOR}`, KEYS.good, 'invalid_parameter', { parameter: 'cursor' });
  await refused('/v1/ping?x=1', KEYS.good, 'invalid_parameter', { parameter: 'x' });
});

test('403 country_not_entitled before invalid_cursor', async () => {
  await refused(`/v1/properties?country=DE&cursor=${CURSOR}`, KEYS.good, 'country_not_entitled');
  await refused('/v1/properties/any-id?country=DE', KEYS.good, 'country_not_entitled');
});

test('400 invalid_cursor before the data service', async () => {
  gw.listings.failing = true;
  try {
    await refused(`/v1/properties?country=GB&cursor=${CURSOR}`, KEYS.good, 'invalid_cursor');
  } finally {
    gw.listings.failing = false;
  }
});

test('then the data service: 404 not_found for an unknown listing, 503 when it is unavailable, 200 otherwise', async () => {
  const callsBefore = gw.listings.calls;
  expectError(await get('/v1/properties/no-such-listing?country=GB', KEYS.good), 'not_found');
  gw.listings.failing = true;
  try {
    expectError(await get('/v1/properties?country=GB', KEYS.good), 'service_unavailable');
  } finally {
    gw.listings.failing = false;
  }
  const page = await get('/v1/properties?country=GB&limit=2', KEYS.good);
  expectKeyedSuccess(page);
  expect(page.body.data).toHaveLength(2);
  expect(gw.listings.calls - callsBefore).toBe(3);
});

describe('the unauthenticated budget', () => {
  let small: InProcessGateway;
  const clock = testClock();
  beforeAll(async () => {
    small = await buildGateway({ keys: [KEYS.good], refusedAuthPerMinute: 2, clock });
  });
  afterAll(async () => small?.close());

  test('an address over its budget gets 429 for any key it does not already know, after the path and method checks; a known valid key is still served', async () => {
    clock.set(MID_MINUTE_MS);
    const at = (path: string, value?: string, method = 'GET') => send(small.url, path, { method, headers: value ? { 'x-api-key': value } : {} });
    for (let i = 0; i < 2; i++) expectError(await at('/v1/ping', randomKeyValue('unknown')), 'unauthenticated');
    expectError(await at('/v1/ping', randomKeyValue('unknown')), 'rate_limited');
    expectError(await at('/v1/ping'), 'rate_limited');
    expectError(await at('/v1/ping', undefined, 'POST'), 'method_not_allowed');
    expectError(await at('/v1/no-such-thing', randomKeyValue('unknown')), 'not_found');
    // A company's servers behind one NAT address: the one with a revoked key must not take the others down.
    expect((await at('/v1/ping', KEYS.good.value)).status).toBe(200);
    expect(small.listings.calls).toBe(0);
  });

  test('the budget is per UTC minute: spent up to the minute\'s last millisecond, whole again at the next minute', async () => {
    const nextMinute = MID_MINUTE_MS + 60_000;
    clock.set(nextMinute);
    const unknown = () => send(small.url, '/v1/ping', { headers: { 'x-api-key': randomKeyValue('unknown') } });
    for (let i = 0; i < 2; i++) expectError(await unknown(), 'unauthenticated');
    clock.set(nextMinute + 29_999);
    const last = await unknown();
    expectError(last, 'rate_limited');
    expect(last.headers['retry-after']).toBe('1');
    clock.advance(1);
    expectError(await unknown(), 'unauthenticated');
  });
});

test('the limits count by the gateway\'s clock: a spent minute is whole again at the next minute, a spent day is not', async () => {
  const clock = testClock();
  const own = await buildGateway({ keys: [KEYS.minuteSpent, KEYS.daySpent], clock });
  try {
    const at = (k: KeySpec) => send(own.url, '/v1/ping', { headers: { 'x-api-key': k.value } });
    for (const k of [KEYS.minuteSpent, KEYS.daySpent]) expectKeyedSuccess(await at(k));
    clock.advance(29_499);
    expectError(await at(KEYS.minuteSpent), 'rate_limited');
    expectError(await at(KEYS.daySpent), 'quota_exceeded');
    clock.advance(1_000);
    expectKeyedSuccess(await at(KEYS.minuteSpent));
    expectError(await at(KEYS.daySpent), 'quota_exceeded');
  } finally {
    await own.close();
  }
});
