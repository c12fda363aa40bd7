import { createReadiness, type ReadinessSources } from '../../gateway/ops/readiness';
import type { ListingStores } from '../../gateway/upstream/listing-stores';

const stores = (healthy: boolean[]): ListingStores =>
  ({ all: () => new Map(healthy.map((h, i) => [`s${i}`, { healthy: async () => h }])) }) as unknown as ListingStores;
const sources = (over: Partial<ReadinessSources> = {}): ReadinessSources => ({ keys: () => 'ok', stores: stores([true]), ...over });

describe('readiness (this instance)', () => {
  test('starting until attached and serving; then ready; draining is final', async () => {
    const r = createReadiness();
    expect(await r.check()).toEqual({ ready: false, status: 'starting', checks: {} });
    r.attach(sources());
    expect((await r.check()).status).toBe('starting');
    r.setPhase('serving');
    expect(await r.check()).toEqual({ ready: true, status: 'serving', checks: { keys: 'ok', data_services: { store_1: 'ok' } } });
    r.setPhase('draining');
    r.setPhase('serving');
    expect(await r.check()).toEqual({ ready: false, status: 'draining', checks: {} });
  });

  test('a data service away or keys served from the cache only: still ready, the body says so', async () => {
    const r = createReadiness();
    r.attach(sources({ stores: stores([true, false]), keys: () => 'cache_only' }));
    r.setPhase('serving');
    expect(await r.check()).toEqual({ ready: true, status: 'serving', checks: { keys: 'cache_only', data_services: { store_1: 'ok', store_2: 'unavailable' } } });
  });

  test('a Redis that refuses this instance (the refusal hook) makes it not ready', async () => {
    let refusal: string | undefined = 'REDIS_URL: Redis refused the credentials (WRONGPASS)';
    const redis = { ping: async () => 'PONG' } as unknown as NonNullable<ReadinessSources['redis']>;
    const r = createReadiness();
    r.attach(sources({ redis, redisRefusal: () => refusal }));
    r.setPhase('serving');
    expect(await r.check()).toEqual({ ready: false, status: 'refused', checks: { keys: 'ok', data_services: { store_1: 'ok' }, redis: 'refused' } });
    refusal = undefined;
    expect(await r.check()).toMatchObject({ ready: true, checks: { redis: 'ok' } });
  });
});
