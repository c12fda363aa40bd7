import type { RedisClient } from '../redis/connect';
import { createdMsOf, MAX_PENDING_REQUESTS, sameRequestKey, TooManyPending, type SubscriptionRequest } from './subscription-request';

/** Per key: a hash of its pending requests, `sameRequestKey` → request id, plus the SEEDED field. */
export const pendingGateKey = (keyId: string): string => `lgw:requests:key-pending:${keyId}`;
/** Present once the hash holds every pending request of the key (see seed). */
const SEEDED = '~seeded';

/**
 * Takes a place for request ARGV[2] (its sameRequestKey ARGV[1]) in one step: the id of the same
 * change pending already, '' when ARGV[3] are pending, ARGV[2] when taken, '~unseeded' when the
 * hash was never filled from the requests pending before it existed. One key: any topology.
 */
const CLAIM = `
if redis.call('HEXISTS', KEYS[1], '${SEEDED}') == 0 then return '${SEEDED}' end
local held = redis.call('HGET', KEYS[1], ARGV[1])
if held then return held end
if redis.call('HLEN', KEYS[1]) - 1 >= tonumber(ARGV[3]) then return '' end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
return ARGV[2]
`;
/** Frees the place ARGV[1] if request ARGV[2] still holds it. */
const RELEASE = `
if redis.call('HGET', KEYS[1], ARGV[1]) == ARGV[2] then redis.call('HDEL', KEYS[1], ARGV[1]) return 1 end
return 0
`;

/** A place whose request was never recorded (its writer died) is freed after this long. */
const UNRECORDED_MS = 30_000;
const ROUNDS = 4;

export interface GateDeps {
  get(id: string): Promise<SubscriptionRequest | undefined>;
  /** The key's pending requests (for the first claim on a key whose requests predate the gate). */
  pendingOf(keyId: string): Promise<SubscriptionRequest[]>;
}

export type Claim = { taken: true } | { taken: false; first: SubscriptionRequest };

/**
 * The cap on a key's pending requests and the check for the same request pending already, made
 * one atomic step in Redis: a place is taken by one script on the key's gate (one key, so on any
 * topology) before the request is written, and freed once it is decided. A place whose request is
 * no longer pending (a decider died before freeing it), or was never written (a writer died), is
 * freed by the next claim that finds it in the way, so a crash never blocks a key for good.
 */
export function createPendingGate(redis: RedisClient, deps: GateDeps) {
  const release = async (keyId: string, same: string, id: string): Promise<void> => {
    await redis.eval(RELEASE, 1, pendingGateKey(keyId), same, id);
  };
  /** Whether the request holding a place is gone for good: decided, or never written (an id without a time: at once). */
  const stale = (id: string, found: SubscriptionRequest | undefined): boolean => (found ? found.status !== 'pending' : !(Date.now() - createdMsOf(id) <= UNRECORDED_MS));
  /** Fills the gate from the key's pending requests (written before the gate existed), once. */
  async function seed(keyId: string): Promise<void> {
    for (const r of await deps.pendingOf(keyId)) await redis.hsetnx(pendingGateKey(keyId), sameRequestKey(r.accountId, r.change), r.id);
    await redis.hset(pendingGateKey(keyId), SEEDED, '1');
  }
  /** Frees the places of requests gone for good; true when one was freed. */
  async function sweep(keyId: string): Promise<boolean> {
    const places = Object.entries(await redis.hgetall(pendingGateKey(keyId))).filter(([same]) => same !== SEEDED);
    let freed = false;
    for (const [same, id] of places) {
      if (stale(id, await deps.get(id))) {
        await release(keyId, same, id);
        freed = true;
      }
    }
    return freed;
  }
  return {
    /** A place for `request`, or the same request pending already; TooManyPending when the key has no place left. */
    async claim(request: SubscriptionRequest): Promise<Claim> {
      const same = sameRequestKey(request.accountId, request.change);
      for (let round = 0; round < ROUNDS; round++) {
        const held = String(await redis.eval(CLAIM, 1, pendingGateKey(request.keyId), same, request.id, String(MAX_PENDING_REQUESTS)));
        // A client that re-sent the script after a lost answer finds its own place.
        if (held === request.id) return { taken: true };
        if (held === SEEDED) {
          await seed(request.keyId);
        } else if (held === '') {
          if (!(await sweep(request.keyId))) throw new TooManyPending();
        } else {
          const first = await deps.get(held);
          if (first?.status === 'pending') return { taken: false, first };
          // Being written by another writer this instant: the same request, recorded once.
          if (!stale(held, first)) return { taken: false, first: { ...request, id: held, createdAt: new Date(createdMsOf(held)).toISOString() } };
          await release(request.keyId, same, held);
        }
      }
      throw new TooManyPending();
    },
    /** Frees the place of a request that was decided, or not recorded. */
    release: (r: SubscriptionRequest): Promise<void> => release(r.keyId, sameRequestKey(r.accountId, r.change), r.id),
  };
}
