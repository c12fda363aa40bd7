import { createGuessBudget, DEFAULT_GUESS_BUDGET } from '../operators/guess-budget';
import type { RedisClient } from '../redis/connect';

/** Failed sign-ins one address may make in a UTC minute; more are refused until the minute ends. */
export const FAILED_SIGN_INS_PER_MINUTE = 10;

/**
 * The failed sign-in budget (docs/portal.md): a wrong or used link and a refused callback count
 * against the caller's address; after 10 in a minute that address's sign-in attempts are refused
 * for the rest of the minute. An attempt is counted when it starts (`take`) and given back when it
 * succeeds, so attempts made in parallel cannot pass the budget together (checking first and
 * counting after the outcome let 34 of 40 parallel wrong links be tried). In Redis the count is
 * shared by every instance (one key a minute, changed by one script); in memory it is this
 * instance's.
 */
export interface SignInBudget {
  /** Counts an attempt of this address; false (nothing counted) when its minute's budget is used. */
  take(address: string): Promise<boolean>;
  /** Gives back the attempt of a sign-in that succeeded: only failures count. */
  giveBack(address: string): Promise<void>;
  /** Seconds until the minute ends (Retry-After). */
  retryAfterSeconds(): number;
}

const minuteOf = (now: number): number => Math.floor(now / 60_000);
const retryAfter = (now: number): number => Math.max(1, Math.ceil((60_000 - (now % 60_000)) / 1000));

/**
 * This instance's budget: the operators' guess budget (operators/guess-budget.ts), so the table is
 * bounded the same way (at most 10,000 addresses a minute; the rest share one budget, never off).
 * Check and count are one synchronous step here.
 */
export function createMemorySignInBudget(perMinute = FAILED_SIGN_INS_PER_MINUTE, now: () => number = Date.now): SignInBudget {
  const budget = createGuessBudget({ ...DEFAULT_GUESS_BUDGET, perMinute, now });
  return {
    async take(address) {
      if (budget.waitFor(address) !== undefined) return false;
      budget.failed(address);
      return true;
    },
    async giveBack(address) {
      budget.forgive(address);
    },
    retryAfterSeconds: () => retryAfter(now()),
  };
}

/** Counts one attempt unless the budget (ARGV[1]) is used; the key lives two minutes. */
const TAKE = `local n = redis.call('INCR', KEYS[1])
if n == 1 then redis.call('PEXPIRE', KEYS[1], 120000) end
if n > tonumber(ARGV[1]) then redis.call('DECR', KEYS[1]) return 0 end
return 1`;
/** Gives one back, never creating the key (the minute may have turned: no key without an expiry). */
const GIVE_BACK = `if redis.call('EXISTS', KEYS[1]) == 1 and tonumber(redis.call('GET', KEYS[1])) > 0 then redis.call('DECR', KEYS[1]) end
return 1`;

/** `prefix` names the budget's keys (another budget of the same kind: login-start-budget.ts). */
export function createRedisSignInBudget(redis: RedisClient, perMinute = FAILED_SIGN_INS_PER_MINUTE, now: () => number = Date.now, prefix = 'lgw:portal:failed'): SignInBudget {
  const key = (address: string): string => `${prefix}:${minuteOf(now())}:${address}`;
  return {
    async take(address) {
      return Number(await redis.eval(TAKE, 1, key(address), perMinute)) === 1;
    },
    async giveBack(address) {
      await redis.eval(GIVE_BACK, 1, key(address));
    },
    retryAfterSeconds: () => retryAfter(now()),
  };
}
