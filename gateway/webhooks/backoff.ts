/**
 * The wait before attempt `attempt + 1` (attempt counts from 1): exponential from `baseMs`, capped
 * at `maxMs`, with "equal jitter" (a uniform draw between half and all of it), so receivers coming
 * back are not hit by every instance's retries at once.
 */
export function retryDelayMs(attempt: number, baseMs: number, maxMs: number, random: () => number = Math.random): number {
  const ceiling = Math.min(maxMs, baseMs * 2 ** Math.min(attempt - 1, 30));
  return Math.round(ceiling / 2 + random() * (ceiling / 2));
}
