/**
 * The gateway's clock: what "now" is for the steps and stores that decide by time (the limit
 * windows, the unauthenticated budget's minute, a key's expiry). Given, not read, so a test can
 * hold time still or move it (test/kit/test-clock.ts); every production part gets `systemClock`.
 */
export interface Clock {
  /** Milliseconds since the Unix epoch, as `Date.now()`. */
  now(): number;
}

/** The machine's clock: `Date.now()`. */
export const systemClock: Clock = { now: () => Date.now() };
