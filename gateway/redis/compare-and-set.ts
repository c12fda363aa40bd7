import type { RedisClient } from './connect';

/**
 * Sets KEYS[1] to ARGV[2] (deletes it when ARGV[2] is empty) only if it still holds ARGV[1] (empty:
 * absent). One key per call, so it runs on any topology, a Redis Cluster included.
 */
export const COMPARE_AND_SET = `
local current = redis.call('GET', KEYS[1])
if (current or '') ~= ARGV[1] then return 0 end
if ARGV[2] == '' then redis.call('DEL', KEYS[1]) else redis.call('SET', KEYS[1], ARGV[2]) end
return 1
`;

/** Sets `key` to `next` (null: deletes it) if it still holds `expected` (null: absent); false when it did not. */
export const compareAndSet = async (redis: RedisClient, key: string, expected: string | null, next: string | null): Promise<boolean> =>
  (await redis.eval(COMPARE_AND_SET, 1, key, expected ?? '', next ?? '')) === 1;
