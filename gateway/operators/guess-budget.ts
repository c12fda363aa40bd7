/**
 * A budget of failed guesses (wrong operator tokens, on the admin API or the console's sign-in) per
 * client address: after `perMinute` failures in a minute, the address is refused for the rest of
 * that minute, whatever it sends (so a right token cannot be told from a wrong one meanwhile).
 * Bounded by construction: at most `maxAddresses` are tracked; once the table is full, the
 * addresses not in it share one budget (coarser, never off) until the minute ends.
 */
export interface GuessBudget {
  /** Seconds until this address may try again, or undefined when it may try now. */
  waitFor(address: string): number | undefined;
  /** Counts a failure; true when it used the last guess of the minute (log it then, once). */
  failed(address: string): boolean;
  /** Takes back one failure of this minute (an attempt counted before its outcome that succeeded). */
  forgive(address: string): void;
}

export interface GuessBudgetOptions {
  readonly perMinute: number;
  readonly maxAddresses: number;
  readonly now?: () => number;
}

export const DEFAULT_GUESS_BUDGET: GuessBudgetOptions = { perMinute: 10, maxAddresses: 10_000 };

/** The address that stands for every address not in a full table. */
export const OVERFLOW = '*';

export function createGuessBudget(o: GuessBudgetOptions = DEFAULT_GUESS_BUDGET): GuessBudget {
  const now = o.now ?? Date.now;
  let minute = -1;
  let failures = new Map<string, number>();
  const current = (): number => {
    const m = Math.floor(now() / 60_000);
    if (m !== minute) {
      minute = m;
      failures = new Map();
    }
    return m;
  };
  const slot = (address: string): string => (failures.has(address) || failures.size < o.maxAddresses ? address : OVERFLOW);
  return {
    waitFor(address) {
      const m = current();
      if ((failures.get(slot(address)) ?? 0) < o.perMinute) return undefined;
      return Math.max(1, Math.ceil(((m + 1) * 60_000 - now()) / 1000));
    },
    failed(address) {
      current();
      const at = slot(address);
      const n = (failures.get(at) ?? 0) + 1;
      failures.set(at, n);
      return n === o.perMinute;
    },
    forgive(address) {
      current();
      const at = slot(address);
      const n = failures.get(at) ?? 0;
      if (n > 0) failures.set(at, n - 1);
    },
  };
}
