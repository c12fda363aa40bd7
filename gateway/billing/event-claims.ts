import { randomUUID } from 'node:crypto';
import type { RedisClient } from '../redis/connect';

/**
 * Each Stripe event is applied once, whatever instance, however many deliveries: a delivery claims
 * the event id (SET NX, for CLAIM_MS), applies it, then marks it done (kept 30 days; Stripe retries
 * for 3). A delivery that finds the id claimed waits for that one to finish; one that finds it done
 * answers at once. A claim whose holder failed is released, so Stripe's retry applies the event; a
 * holder that died is waited out (CLAIM_MS).
 */
const CLAIM_MS = 30_000;
const DONE_SECONDS = 30 * 86_400;
const WAIT_MS = 10_000;
const POLL_MS = 50;
const RELEASE = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0`;

const claimKey = (eventId: string): string => `lgw:billing:stripe:event:${eventId}`;

export type Claim = { readonly state: 'claimed'; done(): Promise<void>; release(): Promise<void> } | { readonly state: 'done' } | { readonly state: 'busy' };

export interface EventClaims {
  claim(eventId: string): Promise<Claim>;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

export function redisEventClaims(redis: RedisClient): EventClaims {
  return {
    async claim(eventId) {
      const key = claimKey(eventId);
      const token = `applying:${randomUUID()}`;
      const until = Date.now() + WAIT_MS;
      for (;;) {
        if ((await redis.set(key, token, 'PX', CLAIM_MS, 'NX')) === 'OK') {
          return {
            state: 'claimed',
            done: async () => void (await redis.set(key, 'done', 'EX', DONE_SECONDS)),
            release: async () => void (await redis.eval(RELEASE, 1, key, token)),
          };
        }
        const now = await redis.get(key);
        if (now === 'done') return { state: 'done' };
        if (Date.now() > until) return { state: 'busy' };
        if (now !== null) await sleep(POLL_MS);
      }
    },
  };
}
