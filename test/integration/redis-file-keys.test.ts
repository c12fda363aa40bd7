/**
 * REDIS_URL with the default KEY_STORE=file: keys come from the YAML file, and the limit counters
 * live in Redis, shared by every instance (docs/operating.md: with REDIS_URL set, limit and quota counters live in Redis).
 */
import { awayFromMinuteEdge, expectError, expectKeyedSuccess, getWithKey, randomKeyValue } from '../kit/gateway-stack';
import { startRedisStack, type RedisStack } from '../kit/redis-stack';

const VALUE = randomKeyValue('file-shared');
let stack: RedisStack;

beforeAll(async () => {
  stack = await startRedisStack({
    keyStore: 'file',
    keys: [{ id: 'file-shared', value: VALUE, tier: 'standard', countries: ['GB'], address: '127.0.0.1', status: 'active', limits: { per_minute: 3, per_day: 1000, per_month: 1000 } }],
    gateways: [{}, {}],
  });
}, 60_000);

afterAll(async () => {
  await stack?.stop();
});

test('two instances with keys from the file share one per-minute count in Redis', async () => {
  await awayFromMinuteEdge();
  const statuses: number[] = [];
  for (let i = 0; i < 6; i++) {
    const answer = await getWithKey(stack.gateways[i % 2]!.url, '/v1/ping', VALUE);
    if (answer.status === 200) expectKeyedSuccess(answer);
    else expectError(answer, 'rate_limited');
    statuses.push(answer.status);
  }
  expect(statuses).toEqual([200, 200, 200, 429, 429, 429]);
  const minuteKeys = await stack.redis.keys('lgw:{file-shared}:minute:*');
  expect(minuteKeys).toHaveLength(1);
  expect(await stack.redis.get(minuteKeys[0]!)).toBe('3');
});
