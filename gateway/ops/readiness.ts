import type { CountingState } from '../limits/resilient-counters';
import type { RedisClient } from '../redis/connect';
import { CallSignal } from '../upstream/json-caller';
import type { ListingStores } from '../upstream/listing-stores';

/**
 * A dependency's state as `/readyz` reports it. `unavailable` (away) is an outage the instance
 * rides out: it stays ready. `refused` (it answers but refuses this instance's configuration:
 * wrong password, a cluster node given as a single Redis...) makes the instance not ready.
 */
export type DependencyState = 'ok' | 'unavailable' | 'refused' | 'not_configured';
/** What the key store can do: `ok`, `cache_only` (store away: keys this instance knows keep working), `lost` (store emptied; see key-store-epoch.ts). */
export type KeysState = 'ok' | 'cache_only' | 'lost';
/** The instance's own phase: `starting` until it listens, `serving`, then `draining` after SIGTERM until it exits. */
export type Phase = 'starting' | 'serving' | 'draining';

export interface Readiness {
  readonly ready: boolean;
  readonly status: Phase | 'refused';
  readonly checks: Record<string, string | Record<string, DependencyState>>;
  /** Where requests are counted now, when Redis is used: `per_instance` while Redis is away. */
  readonly counting?: CountingState;
}

/** How long one readiness probe waits for a data service. */
const PROBE_TIMEOUT_MS = 1000;

export interface ReadinessSources {
  /** The key store's state. */
  readonly keys: () => KeysState;
  readonly stores: ListingStores;
  readonly redis?: RedisClient;
  /**
   * The hook for refusals: the one-line reason Redis refuses this instance's configuration (wrong
   * password, a cluster node given as one Redis...), or undefined. Set by whoever classifies Redis
   * errors; while it says refused, the instance is not ready.
   */
  readonly redisRefusal?: () => string | undefined;
  readonly counting?: () => CountingState;
}

/**
 * This instance's readiness (docs/guarantees.md): ready while it can answer requests, that is once it
 * serves and until SIGTERM, even while Redis or a data service is away (the body names each
 * dependency's state, so monitoring sees the degradation). Not ready while starting, while draining,
 * and while a dependency refuses this instance's configuration: a shared outage must never pull
 * every instance out of the load balancer at once.
 */
export interface InstanceReadiness {
  setPhase(phase: Phase): void;
  readonly phase: Phase;
  /** The sources of the dependency checks, once they exist (until then the instance is starting). */
  attach(sources: ReadinessSources): void;
  check(): Promise<Readiness>;
}

export function createReadiness(): InstanceReadiness {
  let phase: Phase = 'starting';
  let sources: ReadinessSources | undefined;

  async function probeStores(stores: ListingStores): Promise<Record<string, DependencyState>> {
    const states: Record<string, DependencyState> = {};
    await Promise.all(
      [...stores.all().values()].map(async (client, index) => {
        const signal = new CallSignal();
        const timer = setTimeout(() => signal.abort(), PROBE_TIMEOUT_MS);
        const healthy = await client.healthy({ requestId: 'readiness-probe', signal }).catch(() => false);
        clearTimeout(timer);
        // Store names, not URLs: the body must not tell a prober where the stores live.
        states[`store_${index + 1}`] = healthy ? 'ok' : 'unavailable';
      }),
    );
    return states;
  }

  return {
    setPhase(next) {
      // Draining is final: nothing brings a stopping instance back.
      if (phase !== 'draining') phase = next;
    },
    get phase() {
      return phase;
    },
    attach(next) {
      sources = next;
    },
    async check() {
      if (!sources || phase !== 'serving') return { ready: false, status: sources ? phase : 'starting', checks: {} };
      const stores = await probeStores(sources.stores);
      const refused = sources.redisRefusal?.() !== undefined;
      // A PING, not just the connection state: a frozen Redis keeps its connection open.
      const redisState: DependencyState | undefined = sources.redis
        ? refused
          ? 'refused'
          : await sources.redis.ping().then(
              () => 'ok' as const,
              () => 'unavailable' as const,
            )
        : undefined;
      const checks: Readiness['checks'] = {
        keys: sources.keys(),
        data_services: Object.keys(stores).length ? stores : 'not_configured',
        ...(redisState ? { redis: redisState } : {}),
      };
      return { ready: !refused, status: refused ? 'refused' : 'serving', checks, ...(sources.counting ? { counting: sources.counting() } : {}) };
    },
  };
}
