/**
 * The Redis key store's cache against invalidations that arrive while a read is on its way. The
 * timing (a reply read before a change but delivered after its announcement) cannot be produced on
 * demand with a real server, so the two connections are stand-ins here; the store's behaviour with
 * a real Redis is covered by test/integration/redis-*.test.ts.
 */
import { EventEmitter } from 'node:events';
import type Redis from 'ioredis';
import pino from 'pino';
import { createRedisKeyStore } from '../../gateway/keys/redis-key-store';
import { redisKeys } from '../../gateway/keys/redis-layout';

const HASH = 'a'.repeat(64);
const config = { tiers: { standard: { perMinute: 1, perDay: 1, perMonth: 1 }, advanced: { perMinute: 1, perDay: 1, perMonth: 1 } }, stores: { byCountry: {} } };
const record = (status: string) =>
  JSON.stringify({ id: 'k', key_sha256: HASH, tier: 'standard', countries: ['GB'], address: '127.0.0.1', status, ...(status === 'paused' ? { pause_reason: 'unpaid_renewal' } : {}), created_at: 'x', updated_at: 'x' });

function setup() {
  let stored = record('active');
  const pending: Array<() => void> = [];
  let hold = false;
  const redis = {
    status: 'ready',
    get: (key: string) =>
      new Promise<string | null>((resolve) => {
        const value = key === redisKeys.byHash(HASH) ? 'k' : key === redisKeys.record('k') ? stored : null; // read now…
        if (hold) pending.push(() => resolve(value)); // …delivered later
        else resolve(value);
      }),
  } as unknown as Redis;
  const subscriber = Object.assign(new EventEmitter(), { subscribe: async () => 1, options: {} }) as unknown as Redis;
  const store = createRedisKeyStore(redis, subscriber, config, pino({ level: 'silent' }));
  subscriber.emit('ready');
  return {
    store,
    change(status: string) {
      stored = record(status);
      subscriber.emit('message', redisKeys.changes, JSON.stringify({ hashes: [HASH] }));
    },
    holdReplies: (on: boolean) => (hold = on),
    deliver: () => pending.splice(0).forEach((f) => f()),
  };
}

const statusOf = async (store: ReturnType<typeof setup>['store']) => {
  const lookup = await store.lookup(HASH);
  return lookup.kind === 'found' ? lookup.record.status : lookup.kind;
};

it('does not cache a record read before a change that was announced while the reply was on its way', async () => {
  const s = setup();
  await new Promise((r) => setImmediate(r)); // let the subscription settle
  s.holdReplies(true);
  const inFlight = s.store.lookup(HASH);
  await new Promise((r) => setImmediate(r));
  s.deliver(); // hash → id
  await new Promise((r) => setImmediate(r)); // the record is read now (still active), its reply held
  s.change('paused'); // announced before that reply arrives
  s.holdReplies(false);
  s.deliver();
  const first = await inFlight;
  expect(first.kind === 'found' && first.record.status).toBe('active'); // answered with what it read…
  expect(await statusOf(s.store)).toBe('paused'); // …but not cached: the next look-up reads again
});

it('serves from the cache until a change message names the hash', async () => {
  const s = setup();
  await new Promise((r) => setImmediate(r));
  expect(await statusOf(s.store)).toBe('active');
  s.change('revoked');
  expect(await statusOf(s.store)).toBe('revoked');
});
