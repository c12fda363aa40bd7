import type { CountingState } from '../limits/resilient-counters';
import type { RedisClient } from '../redis/connect';
import { CallSignal } from '../upstream/json-caller';
import type { ListingStores } from '../upstream/listing-stores';

/** `refused`: the dependency answers but refuses this instance's configuration (never ready then). */
export type CheckState = 'ok' | 'unavailable' | 'not_configured' | 'refused';
export interface Readiness {
  readonly ready: boolean;
  readonly checks: Record<string, CheckState | Record<string, CheckState>>;
  /** Where requests are counted now, when Redis is used: `per_instance` while Redis is away. */
  readonly counting?: CountingState;
}

/** How long one readiness probe waits for a data service. */
const PROBE_TIMEOUT_MS = 1000;

export interface ReadinessSources {
  /** True once the key store can answer (file loaded; Redis store connected). */
  readonly keysReady: () => boolean;
  readonly stores: ListingStores;
  readonly redis?: RedisClient;
  /** The one-line reason Redis refuses this instance's configuration, or undefined. */
  readonly redisRefusal?: () => string | undefined;
  readonly counting?: () => CountingState;
}

/**
 * Readiness for an orchestrator: keys loaded, every configured listing store answering its health
 * check, and Redis connected when it is used. The body names what is not ready.
 */
export async function checkReadiness(sources: ReadinessSources): Promise<Readiness> {
  const stores: Record<string, CheckState> = {};
  await Promise.all(
    [...sources.stores.all().values()].map(async (client, index) => {
      const signal = new CallSignal();
      const timer = setTimeout(() => signal.abort(), PROBE_TIMEOUT_MS);
      const healthy = await client.healthy({ requestId: 'readiness-probe', signal }).catch(() => false);
      clearTimeout(timer);
      // Store names, not URLs: the body must not tell a prober where the stores live.
      stores[`store_${index + 1}`] = healthy ? 'ok' : 'unavailable';
    }),
  );
  // A PING, not just the connection state: a frozen Redis keeps its connection open.
  const redisAnswers = sources.redis
    ? await sources.redis.ping().then(
        () => true,
        () => false,
      )
    : undefined;
  const refused = sources.redisRefusal?.() !== undefined;
  const checks: Readiness['checks'] = {
    keys: sources.keysReady() ? 'ok' : 'unavailable',
    data_services: Object.keys(stores).length ? stores : 'not_configured',
    ...(sources.redis ? { redis: refused ? 'refused' : redisAnswers ? 'ok' : 'unavailable' } : {}),
  };
  const ready = checks.keys === 'ok' && Object.values(stores).every((s) => s === 'ok') && checks.redis !== 'unavailable' && checks.redis !== 'refused';
  return { ready, checks, ...(sources.counting ? { counting: sources.counting() } : {}) };
}
