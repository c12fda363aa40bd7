/**
 * The cursors this process issued, remembered for a while: a walk's next request brings back the
 * cursor of the page before, and opening it from here skips the base64url decoding, the AES-GCM
 * decryption and the JSON parse (about half of the cursor's cost per page, bench/round-three.ts).
 *
 * Only cursors this process encrypted itself enter, keyed by the whole cursor string, so a caller
 * cannot put anything here, and a cursor changed by even one character is a different string: it
 * misses and goes through the full decryption, which refuses it. What is remembered is the claims
 * the cursor carries; every check on them (expiry, key, filters) still runs on each request. A
 * bounded least-recently-used map: at the bound, the entry used longest ago leaves. A cursor that
 * left is still opened, by decryption, as before.
 */

/** The claims inside a cursor (the payload the codec encrypts). */
export interface CursorClaims {
  readonly k: string;
  readonly f: string;
  readonly p: string;
  readonly exp: number;
}

/** Entries at most: a cursor and its claims take ~0.5 KB, so ~2 MB at the bound. */
export const ISSUED_CURSORS_BOUND = 4096;

export interface IssuedCursors {
  remember(token: string, claims: CursorClaims): void;
  /** The claims of a cursor this process issued and still remembers; the entry becomes the most recent. */
  recall(token: string): CursorClaims | undefined;
  readonly size: number;
}

export function issuedCursors(bound = ISSUED_CURSORS_BOUND): IssuedCursors {
  if (!Number.isInteger(bound) || bound < 0) throw new Error('the bound on remembered cursors must be a whole number ≥ 0');
  // A Map iterates in insertion order: the first key is the least recently used one.
  const entries = new Map<string, CursorClaims>();
  return {
    remember(token, claims) {
      if (bound === 0) return;
      entries.delete(token);
      if (entries.size >= bound) entries.delete(entries.keys().next().value!);
      entries.set(token, claims);
    },
    recall(token) {
      const claims = entries.get(token);
      if (claims === undefined) return undefined;
      entries.delete(token);
      entries.set(token, claims);
      return claims;
    },
    get size() {
      return entries.size;
    },
  };
}
