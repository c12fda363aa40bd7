/**
 * The storage cost of usage history in Redis, measured: 1,000 keys each active every day of a
 * 30-day month, once with accepted requests only and once with accepted plus two refusal codes a
 * day, written through the real store. Reports MEMORY USAGE of the month hashes and the month index
 * per key and day, and the server's used_memory growth. Run: `npx tsx bench/usage-storage.ts`
 * (also part of `npm run bench:usage`).
 */
import Redis from 'ioredis';
import { startRedis } from '../test/kit/redis-server';
import { createRedisUsageStore, usageKeys } from '../gateway/usage/redis-usage-store';
import type { UsageEntry, UsageField } from '../gateway/usage/usage-model';

const KEYS = 1000;
const DAYS = 30;

async function usedMemory(redis: Redis): Promise<number> {
  const info = await redis.info('memory');
  return Number(/used_memory:(\d+)/.exec(info)![1]);
}

async function measure(redis: Redis, month: string, fields: UsageField[]): Promise<{ perKeyDay: number; perKeyDayServer: number }> {
  const store = createRedisUsageStore(redis);
  const before = await usedMemory(redis);
  for (let day = 1; day <= DAYS; day++) {
    const entries: UsageEntry[] = [];
    for (let k = 0; k < KEYS; k++) {
      for (const field of fields) entries.push({ keyId: `customer-${k}`, day: `${month}-${String(day).padStart(2, '0')}`, field, count: 1000 + k });
    }
    await store.add(entries);
  }
  const after = await usedMemory(redis);
  let hashes = 0;
  for (let k = 0; k < KEYS; k++) hashes += (await redis.memory('USAGE', usageKeys.month(`customer-${k}`, month), 'SAMPLES', '0')) ?? 0;
  const index = (await redis.memory('USAGE', usageKeys.index(month), 'SAMPLES', '0')) ?? 0;
  return { perKeyDay: (hashes + index) / (KEYS * DAYS), perKeyDayServer: (after - before) / (KEYS * DAYS) };
}

async function main(): Promise<void> {
  const server = await startRedis();
  const redis = new Redis(server.url);
  try {
    const plain = await measure(redis, '2026-09', ['accepted']);
    const refusals = await measure(redis, '2026-11', ['accepted', 'rate_limited', 'invalid_parameter']);
    const round = (n: number): string => n.toFixed(1);
    process.stdout.write(
      `usage history storage in Redis (${KEYS} keys × ${DAYS} days, MEMORY USAGE of the month hashes + index):\n` +
        `  accepted only:                 ${round(plain.perKeyDay)} bytes per active key and day (server used_memory growth: ${round(plain.perKeyDayServer)})\n` +
        `  accepted + 2 refusal codes:    ${round(refusals.perKeyDay)} bytes per active key and day (server used_memory growth: ${round(refusals.perKeyDayServer)})\n`,
    );
  } finally {
    redis.disconnect();
    await server.stop();
  }
}

void main();
