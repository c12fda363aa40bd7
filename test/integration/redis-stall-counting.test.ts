/**
 * Finding 3 of the second security round: limits and quotas while Redis stalls. A real
 * redis-server frozen with SIGSTOP (connections open, nothing answered), two gateways, a key with
 * 5 per minute, 5 per day and 5 per month, six bursts of 100 requests 1.2 s apart. A request whose
 * shared count cannot be confirmed is counted in the instance (gateway/limits/resilient-counters.ts),
 * so each instance allows at most the key's full limit during the stall: 10 at most here, never 600.
 */
import { randomKeyValue, sleep, type KeySpec, getWithKey } from '../kit/gateway-stack';
import type { RedisServer } from '../kit/redis-server';
import { startRedisStack, type RedisStack } from '../kit/redis-stack';

const KEY: KeySpec = {
  id: 'stall', value: randomKeyValue('stall'), tier: 'standard', countries: ['GB'], address: '127.0.0.1', status: 'active',
  limits: { per_minute: 5, per_day: 5, per_month: 5 },
};

let redis: RedisServer;
let stack: RedisStack;
beforeAll(async () => {
  stack = await startRedisStack({ keyStore: 'file', keys: [KEY], env: { REDIS_COMMAND_TIMEOUT_MS: '200' }, gateways: [{}, {}] });
  redis = stack.redisServer;
}, 60_000);
afterAll(async () => {
  redis?.thaw();
  await stack?.stop();
});

test('finding 3: with Redis frozen, six bursts of 100 requests on two gateways are held to the limit per instance', async () => {
  redis.freeze();
  const statuses: number[] = [];
  for (let burst = 0; burst < 6; burst++) {
    const answers = await Promise.all(
      Array.from({ length: 100 }, (_, i) =>
        getWithKey(stack.gateways[i % 2]!.url, '/v1/ping', KEY.value, { timeoutMs: 10_000 }).then(
          (a) => a.status,
          () => 0,
        ),
      ),
    );
    statuses.push(...answers);
    await sleep(1200);
  }
  redis.thaw();
  const allowed = statuses.filter((s) => s === 200).length;
  process.stdout.write(`finding 3: Redis frozen, 600 requests: ${allowed} answered 200, ${statuses.filter((s) => s === 429).length} refused 429, others: ${statuses.filter((s) => s !== 200 && s !== 429).length}\n`);
  // Each instance counts what it could not confirm: at most the full limit (5) per instance.
  expect(allowed).toBeLessThanOrEqual(10);
  expect(allowed).toBeGreaterThanOrEqual(1);
  expect(statuses.filter((s) => s !== 200 && s !== 429)).toEqual([]);
}, 60_000);
