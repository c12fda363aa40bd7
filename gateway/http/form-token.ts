import { timingSafeEqual } from 'node:crypto';

/**
 * Constant-time check of a token a form sent (`_csrf`) against the one its session holds: the
 * console's and the portal's CSRF check. Anything but a string of the same length is a mismatch.
 */
export function formTokenMatches(expected: string, given: unknown): boolean {
  if (typeof given !== 'string') return false;
  const a = Buffer.from(expected);
  const b = Buffer.from(given);
  return a.length === b.length && timingSafeEqual(a, b);
}
