/**
 * Failures are not charged (docs/guarantees.md): a request counted by the limits and then answered 500
 * or 503 gives its count back in all three windows, with the in-memory counters and with Redis.
 * Refusals after the limit step (400 invalid_parameter, 403 country_not_entitled, 404 not_found) stay counted.
 */
import { awayFromMinuteEdge, eventually, getWithKey, remainingIn, sleep, startStack, type Answer, type Stack } from '../kit/gateway-stack';
import { usageOf } from '../kit/keys-cli';
import { startRedisStack, type RedisStack } from '../kit/redis-stack';
import { startStubUpstream, type StubUpstream } from '../kit/stub-upstream';

const LIMITS = { per_minute: 1000, per_day: 5000, per_month: 50000 };
const PAGE = '/v1/properties?country=GB&limit=3';

describe('in-memory counters', () => {
  let stub: StubUpstream;
  let stack: Stack;
  beforeAll(async () => {
    stub = await startStubUpstream();
    stack = await startStack({
      keys: [{ id: 'mem', value: 'it-mem-refund-0123456789', tier: 'standard', countries: ['GB'], address: '127.0.0.1', status: 'active', limits: LIMITS }],
      backendUrl: stub.url,
      gateways: [{ UPSTREAM_TIMEOUT_MS: '3000' }],
    });
  });
  afterAll(async () => {
    await stack?.stop();
    await stub?.close();
  });

  const call = (): Promise<Answer> => getWithKey(stack.url, PAGE, stack.key('mem').value);
  const remaining = (a: Answer): number[] => (['minute', 'day', 'month'] as const).map((w) => remainingIn(a, w)!);

  test('503 and 500 answers give their count back in all three windows; a 400 after the limit step stays counted', async () => {
    await awayFromMinuteEdge(10_000);
    stub.mode = 'ok';
    const first = await call();
    expect(first.status).toBe(200);
    const before = remaining(first);

    for (const [mode, status] of [['reset', 503], ['500-stack', 500], ['non-json', 500]] as const) {
      stub.mode = mode;
      expect((await call()).status).toBe(status);
    }
    stub.mode = 'ok';
    // Nothing to wait for: the memory counters' give-back is queued before each failure's answer is
    // written, and runs before the gateway reads another request.
    const after = await call();
    expect(after.status).toBe(200);
    // Only `after` itself was charged since `first`.
    expect(remaining(after)).toEqual(before.map((r) => r - 1));

    // A refusal after the limit step (400 invalid_parameter) is not a failure of ours: charged.
    expect((await getWithKey(stack.url, '/v1/properties?country=GB&limit=0', stack.key('mem').value)).status).toBe(400);
    const last = await call();
    expect(remaining(last)).toEqual(before.map((r) => r - 3));
  });

  test('a request whose caller went away before the answer stays counted (nothing was answered 500 or 503)', async () => {
    await awayFromMinuteEdge(10_000);
    stub.mode = 'ok';
    const before = remaining(await call());
    // The data service hangs; the caller gives up, so the gateway aborts its upstream call.
    stub.mode = 'hang';
    const seen = stub.requests.length;
    await expect(getWithKey(stack.url, PAGE, stack.key('mem').value, { timeoutMs: 300 })).rejects.toThrow();
    await stub.waitFor(() => stub.requests.length > seen && stub.requests[seen]!.aborted, 5000, 'the upstream call aborted');
    stub.mode = 'ok';
    await sleep(50);
    const after = await call();
    expect(after.status).toBe(200);
    // Both the abandoned request and `after` are charged: otherwise a caller could have the data
    // service work beyond its limits for free by hanging up before each answer.
    expect(remaining(after)).toEqual(before.map((r) => r - 2));
  });
});

describe('Redis counters: the data service stopped leaves keys usage unchanged', () => {
  let stack: RedisStack;
  let value = '';
  beforeAll(async () => {
    stack = await startRedisStack({ gateways: [{ UPSTREAM_TIMEOUT_MS: '3000' }] });
    value = await stack.provisioner()('paying', LIMITS);
  }, 60_000);
  afterAll(async () => {
    await stack?.stop();
  });

  test('refusals after the limit step (403 country_not_entitled, 404 not_found from the data service) stay counted in every window', async () => {
    await awayFromMinuteEdge(15_000);
    const refusedValue = await stack.provisioner()('refused-counted', LIMITS);
    const country = await getWithKey(stack.url, '/v1/properties?country=DE', refusedValue);
    expect(country.status).toBe(403);
    expect(country.body).toMatchObject({ error: 'country_not_entitled' });
    const missing = await getWithKey(stack.url, '/v1/properties/no-such-listing-0?country=GB', refusedValue);
    expect(missing.status).toBe(404);
    expect(missing.body).toMatchObject({ error: 'not_found' });
    // A give-back happens off the request's way: leave it time to happen before looking.
    await sleep(1000);
    expect(await usageOf(stack.redisServer.url, 'refused-counted')).toEqual({ minute: 2, day: 2, month: 2 });
  }, 60_000);

  test('one 200 counts 1; then, the data service stopped, 503s leave the count at 1 in every window', async () => {
    await awayFromMinuteEdge(15_000);
    expect((await getWithKey(stack.url, PAGE, value)).status).toBe(200);
    expect(await usageOf(stack.redisServer.url, 'paying')).toEqual({ minute: 1, day: 1, month: 1 });

    await stack.backend!.stop();
    for (let i = 0; i < 3; i++) {
      const failed = await getWithKey(stack.url, PAGE, value);
      expect(failed.status).toBe(503);
      expect(failed.body).toMatchObject({ error: 'service_unavailable' });
    }
    // The count is given back right after the answer (off the request's way): poll briefly.
    const usage = await eventually('the counts given back', async () => {
      const now = await usageOf(stack.redisServer.url, 'paying');
      return now.day === 1 && now;
    }, { timeoutMs: 5000, intervalMs: 100 }).catch(() => usageOf(stack.redisServer.url, 'paying'));
    expect(usage).toEqual({ minute: 1, day: 1, month: 1 });
  }, 60_000);
});
