/** What one compare-and-set attempt returns when another writer changed the value first. */
export const LOST = Symbol('lost to another writer');

/** How many times a change is read and tried again before the caller is told to retry. */
const ATTEMPTS = 10;

/**
 * Runs `attempt` (read, change, compare-and-set) until it does not report `LOST`; after ATTEMPTS
 * lost races, throws `giveUp()` (nothing was written by the lost attempts).
 */
export async function untilSet<T>(attempt: () => Promise<T | typeof LOST>, giveUp: () => Error): Promise<T> {
  for (let i = 0; i < ATTEMPTS; i++) {
    const result = await attempt();
    if (result !== LOST) return result;
  }
  throw giveUp();
}
