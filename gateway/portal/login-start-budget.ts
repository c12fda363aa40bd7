import type { RedisClient } from '../redis/connect';
import { createMemorySignInBudget, createRedisSignInBudget, type SignInBudget } from './sign-in-budget';

/** OpenID sign-ins one address may start in a UTC minute (a person needs one or two). */
export const LOGIN_STARTS_PER_ADDRESS_PER_MINUTE = 20;
/**
 * Sign-ins every address together may start in a UTC minute: with each pending 10 minutes, at most
 * 60,000 are stored (about 23 MB in Redis at ~390 bytes each), whatever the number of addresses.
 */
export const LOGIN_STARTS_PER_MINUTE = 6_000;

/**
 * The budget on starting an OpenID sign-in (`GET /portal/login`), which stores a pending sign-in
 * for 10 minutes before the caller has proved anything: per address and for everyone together.
 * Each start is counted (never given back: a pending sign-in costs its storage whether or not it
 * completes). In Redis both counts are shared by every instance; in memory they are this one's.
 */
export interface LoginStartBudget {
  /** Counts a start from this address; false (refuse, 429) when its or everyone's minute is used. */
  take(address: string): Promise<boolean>;
  retryAfterSeconds(): number;
}

const EVERYONE = 'everyone';

function bothOf(perAddress: SignInBudget, overall: SignInBudget): LoginStartBudget {
  return {
    async take(address) {
      return (await perAddress.take(address)) && (await overall.take(EVERYONE));
    },
    retryAfterSeconds: () => perAddress.retryAfterSeconds(),
  };
}

export function createLoginStartBudget(redis?: RedisClient, perAddress = LOGIN_STARTS_PER_ADDRESS_PER_MINUTE, overall = LOGIN_STARTS_PER_MINUTE): LoginStartBudget {
  if (!redis) return bothOf(createMemorySignInBudget(perAddress), createMemorySignInBudget(overall));
  return bothOf(
    createRedisSignInBudget(redis, perAddress, Date.now, 'lgw:portal:login-starts'),
    createRedisSignInBudget(redis, overall, Date.now, 'lgw:portal:login-starts-all'),
  );
}
