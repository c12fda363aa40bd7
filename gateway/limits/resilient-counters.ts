import type { Logger } from 'pino';
import type { Limits } from '../config/gateway-config';
import type { RedisClient } from '../redis/connect';
import type { RedisHealth } from '../redis/health';
import type { Counters, LimitDecision } from './counters';

const tagged = (decision: LimitDecision, store: 'shared' | 'local'): LimitDecision =>
  decision.kind === 'unavailable' ? decision : { ...decision, store };

/** After a Redis failure, requests use the local counters for this long before Redis is tried again. */
const RETRY_SHARED_AFTER_MS = 1000;

const UNAVAILABLE: LimitDecision = { kind: 'unavailable' };

/** Where requests are counted now: in Redis, per instance (Redis away), or nowhere (Redis refuses: 503). */
export type CountingState = 'shared' | 'per_instance' | 'refused';

export interface ResilientCounters extends Counters {
  state(): CountingState;
}

/**
 * Shared counters with a per-instance fallback (the "insurance" policy): while Redis is down or
 * failing, each instance counts in memory against the same limits, so the gateway keeps answering
 * and keeps limiting (each instance then allows up to the full limit: the limit is per instance
 * during an outage). Switching is logged once each way. No request waits on a Redis that is
 * known to be down: the client's state is checked first, and a failed call is not retried for a second.
 *
 * A Redis that refuses this instance (credentials, ACL, TLS, a cluster node given as one Redis) is
 * not away: counting per instance then would hand every instance the full limit unnoticed, so
 * requests are answered `unavailable` (503) until it accepts again.
 *
 * A request is never free: one whose shared count cannot be confirmed (the call failed or timed
 * out) is counted in the instance. A timed-out call may still have run on Redis (a stalled server
 * runs what it was sent once it resumes), so such a request can be counted twice, once in Redis and
 * once here: during a stall the gateway errs towards refusing, never towards allowing more.
 */
export function createResilientCounters(shared: Counters, local: Counters, redis: RedisClient, logger: Logger, health: RedisHealth): ResilientCounters {
  let usingLocalUntil = 0;
  let degraded = false;

  const degrade = (err: unknown): void => {
    usingLocalUntil = Date.now() + RETRY_SHARED_AFTER_MS;
    if (!degraded) logger.warn({ err: (err as Error)?.message }, 'shared counters unavailable: counting per instance until Redis is back');
    degraded = true;
  };
  const recover = (): void => {
    if (degraded) logger.info('shared counters back: counting in Redis again');
    degraded = false;
  };

  async function withFallback(op: 'consume' | 'peek', keyId: string, limits: Limits, nowMs?: number): Promise<LimitDecision> {
    if (redis.status !== 'ready' && health.refusal() !== undefined) return UNAVAILABLE;
    if (redis.status !== 'ready' || Date.now() < usingLocalUntil) {
      if (redis.status !== 'ready') degrade(new Error(`redis ${redis.status}`));
      return tagged(await local[op](keyId, limits, nowMs), 'local');
    }
    try {
      const decision = await shared[op](keyId, limits, nowMs);
      recover();
      return tagged(decision, 'shared');
    } catch (err) {
      if (health.report(err) !== undefined) return UNAVAILABLE;
      degrade(err);
      // Unconfirmed, so counted here, even after a timeout (see above: possibly counted twice).
      return tagged(await local[op](keyId, limits, nowMs), 'local');
    }
  }

  return {
    state: () => (health.refusal() !== undefined ? 'refused' : degraded || redis.status !== 'ready' ? 'per_instance' : 'shared'),
    consume: (keyId, limits, nowMs) => withFallback('consume', keyId, limits, nowMs),
    peek: (keyId, limits, nowMs) => withFallback('peek', keyId, limits, nowMs),
    // Given back where it was counted. A refund Redis cannot take now is lost: the request stays
    // charged, as it would have been without refunds (logged at debug level, never per request above).
    refund: async (keyId, countedAtMs, store) => {
      if (store !== 'shared') return local.refund(keyId, countedAtMs);
      try {
        await shared.refund(keyId, countedAtMs);
      } catch (err) {
        logger.debug({ err: (err as Error)?.message, key_id: keyId }, 'refund not applied: Redis did not take it');
      }
    },
  };
}
