import { createGuessBudget, DEFAULT_GUESS_BUDGET } from '../operators/guess-budget';
import type { RedisClient } from '../redis/connect';

/** Failed sign-ins one address may make in a UTC minute; more are refused until the minute ends. */
export const FAILED_SIGN_INS_PER_MINUTE = 10;

/**
 * The failed sign-in budget (CONTRACT part 8): a wrong or used link and a refused callback count
 * against the caller's address; after 10 in a minute that address's sign-in attempts are refused
 * for the rest of the minute. In Redis the count is shared by every instance (one INCR with an
 * expiry); in memory it is this instance's.
 */
export interface SignInBudget {
  /** Whether this address may try now (its failures of this minute are under the budget). */
  allowed(address: string): Promise<boolean>;
  failed(address: string): Promise<void>;
  /** Seconds until the minute ends (Retry-After). */
  retryAfterSeconds(): number;
}

const minuteOf = (now: number): number => Math.floor(now / 60_000);
const retryAfter = (now: number): number => Math.max(1, Math.ceil((60_000 - (now % 60_000)) / 1000));

/**
 * This instance's budget: the operators' guess budget (operators/guess-budget.ts), so the table is
 * bounded the same way (at most 10,000 addresses a minute; the rest share one budget, never off).
 */
export function createMemorySignInBudget(perMinute = FAILED_SIGN_INS_PER_MINUTE, now: () => number = Date.now): SignInBudget {
  const budget = createGuessBudget({ ...DEFAULT_GUESS_BUDGET, perMinute, now });
  return {
    async allowed(address) {
      return budget.waitFor(address) === undefined;
    },
    async failed(address) {
      budget.failed(address);
    },
    retryAfterSeconds: () => retryAfter(now()),
  };
}

export function createRedisSignInBudget(redis: RedisClient, perMinute = FAILED_SIGN_INS_PER_MINUTE, now: () => number = Date.now): SignInBudget {
  const key = (address: string): string => `lgw:portal:failed:${minuteOf(now())}:${address}`;
  return {
    async allowed(address) {
      return Number((await redis.get(key(address))) ?? 0) < perMinute;
    },
    async failed(address) {
      const k = key(address);
      await redis.multi().incr(k).pexpire(k, 120_000).exec();
    },
    retryAfterSeconds: () => retryAfter(now()),
  };
}
