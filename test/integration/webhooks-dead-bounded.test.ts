/**
 * Dead letters in Redis are bounded by count and age, and a page is read without reading them all
 * (issue 23 finding 5, issue 25 item 5): a page's reply bytes at 20,000 letters are about those at
 * 100, measured by the server's own output counter. Real redis-server.
 */
import Redis from 'ioredis';
import { BURY, buryArgs, deadLetterKeys, type StoredDead } from '../../gateway/webhooks/redis-dead-letters';
import { redisDeadLetters } from '../../gateway/webhooks/redis-webhook-queue';
import { startRedis, type RedisServer } from '../kit/redis-server';

let server: RedisServer;
let redis: Redis;

beforeAll(async () => {
  server = await startRedis();
  redis = new Redis(server.url, { lazyConnect: false });
});
afterAll(async () => {
  redis.disconnect();
  await server.stop();
});
beforeEach(() => redis.flushall());

const event = (id: string): string => JSON.stringify({ id, type: 'key.created', timestamp: '2026-11-01T00:00:00Z', data: { key_id: `k-${id}`, note: 'x'.repeat(200) } });
const stored = (id: string, failedAt: number): StoredDead => ({ event: event(id), attempts: 9, last_error: 'status 503', failed_at: new Date(failedAt).toISOString() });
const T0 = Date.UTC(2026, 10, 1);

/** Many letters at once, as BURY would keep them (hash and index together). */
async function fill(count: number, bounds = { maxCount: 1_000_000, maxAgeMs: 365 * 86_400_000 }): Promise<void> {
  for (let i = 0; i < count; i += 1000) {
    const tx = redis.pipeline();
    for (let j = i; j < Math.min(count, i + 1000); j++) {
      const id = `msg_${String(j).padStart(6, '0')}`;
      tx.eval(BURY, 2, deadLetterKeys.letters, deadLetterKeys.index, ...buryArgs(id, stored(id, T0 + j), bounds, T0 + j));
    }
    await tx.exec();
  }
}

async function bytesOfFirstPage(limit: number): Promise<number> {
  const outBytes = async (): Promise<number> => Number(/total_net_output_bytes:(\d+)/.exec(await redis.info('stats'))![1]);
  const before = await outBytes();
  const page = await redisDeadLetters(redis).deadLetterPage({ limit });
  expect(page.events).toHaveLength(limit);
  return (await outBytes()) - before;
}

describe('dead letters in Redis', () => {
  it('reads a page without reading every letter: the same bytes at 100 and at 20,000 letters', async () => {
    await fill(100);
    const small = await bytesOfFirstPage(1);
    await fill(20_000);
    const large = await bytesOfFirstPage(1);
    // One letter is ~500 bytes: reading the whole hash would be ~10 MB. Both include one INFO reply.
    expect(large).toBeLessThan(small + 2_000);
    expect(large).toBeLessThan(10_000);
  });

  it('walks every letter once in failure order, across pages, and re-sends one out of the index', async () => {
    await fill(25);
    const dead = redisDeadLetters(redis);
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await dead.deadLetterPage({ limit: 7, ...(cursor ? { cursor } : {}) });
      seen.push(...page.events.map((e) => e.id));
      cursor = page.next_cursor ?? undefined;
    } while (cursor);
    expect(seen).toEqual(Array.from({ length: 25 }, (_, j) => `msg_${String(j).padStart(6, '0')}`));
    expect(await dead.resend('msg_000003')).toBe(true);
    expect(await dead.resend('msg_000003')).toBe(false);
    expect(await redis.zcard(deadLetterKeys.index)).toBe(24);
    expect(await redis.hlen(deadLetterKeys.letters)).toBe(24);
    await expect(dead.deadLetterPage({ cursor: 'bm90LWEtY3Vyc29y' })).rejects.toMatchObject({ code: 'invalid_parameter', extras: { parameter: 'cursor' } });
  });

  it('keeps at most maxCount letters and none older than maxAgeMs, dropping the oldest', async () => {
    await fill(60, { maxCount: 50, maxAgeMs: 365 * 86_400_000 });
    expect(await redis.hlen(deadLetterKeys.letters)).toBe(50);
    expect(await redis.zcard(deadLetterKeys.index)).toBe(50);
    expect((await redisDeadLetters(redis).deadLetterPage({ limit: 1 })).events[0]!.id).toBe('msg_000010');
    // A letter kept a day later, with an age bound of one hour: every older letter goes.
    const later = T0 + 86_400_000;
    await redis.eval(BURY, 2, deadLetterKeys.letters, deadLetterKeys.index, ...buryArgs('msg_late', stored('msg_late', later), { maxCount: 50, maxAgeMs: 3_600_000 }, later));
    expect(await redis.hkeys(deadLetterKeys.letters)).toEqual(['msg_late']);
    expect(await redis.zcard(deadLetterKeys.index)).toBe(1);
  });

  it('indexes letters an older gateway kept without an index', async () => {
    for (let j = 0; j < 1_200; j++) await redis.hset(deadLetterKeys.letters, `old_${j}`, JSON.stringify(stored(`old_${j}`, T0 + j)));
    const dead = redisDeadLetters(redis);
    expect((await dead.deadLetterPage({})).events).toEqual([]);
    expect(await dead.indexUnindexed()).toBe(1_200);
    expect((await dead.deadLetterPage({ limit: 2 })).events.map((e) => e.id)).toEqual(['old_0', 'old_1']);
    expect(await dead.indexUnindexed()).toBe(0);
  });
});
