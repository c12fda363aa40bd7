/** The content codings the gateway can send (zstd only where the runtime has it: codecs.ts). */
export type ContentCoding = 'br' | 'gzip' | 'zstd';

export interface EncodingChoice {
  /** The best coding the caller accepts among those offered, or `identity`. */
  readonly coding: ContentCoding | 'identity';
  /** Whether an uncompressed answer is acceptable (false only for `identity;q=0`, or `*;q=0` without identity). */
  readonly identityAcceptable: boolean;
}

const IDENTITY: EncodingChoice = Object.freeze({ coding: 'identity', identityAcceptable: true });
/** `;q=` weights: 0 to 1 with up to three decimals (RFC 9110 §12.4.2); anything else makes the entry void. */
const QVALUE = /^[qQ]=(0(?:\.[0-9]{0,3})?|1(?:\.0{0,3})?)$/;

/** The weights of an Accept-Encoding value by coding name (lower-cased); a malformed entry is skipped. */
export function parseAcceptEncoding(header: string): Map<string, number> {
  const weights = new Map<string, number>();
  for (const entry of header.split(',')) {
    const [rawName, ...params] = entry.split(';');
    const name = rawName!.trim().toLowerCase();
    if (!name) continue;
    let q = 1;
    let valid = true;
    for (const param of params) {
      const p = param.trim();
      if (!p) continue;
      const m = QVALUE.exec(p);
      if (m) q = Number(m[1]);
      else if (/^[qQ]=/.test(p)) valid = false;
    }
    // The same coding named twice: the first mention stands (as most servers read it).
    if (valid && !weights.has(name)) weights.set(name, q);
  }
  return weights;
}

/**
 * Picks the coding of an answer from the request's Accept-Encoding (RFC 9110 §12.5.3): the offered
 * coding with the highest weight above 0, ties going to the order of `offered` (the server's
 * preference); `*` weighs every coding not named; a coding not named (without `*`) is not acceptable.
 * Identity is acceptable unless `identity;q=0` (or `*;q=0` without identity named); the caller wins
 * over compression when it weighs identity strictly higher than every offered coding. No header, or
 * an empty one: identity.
 */
export function chooseEncoding(header: string | undefined, offered: readonly ContentCoding[]): EncodingChoice {
  if (header === undefined || header.trim() === '') return IDENTITY;
  const weights = parseAcceptEncoding(header);
  const star = weights.get('*');
  const weightOf = (name: string): number => weights.get(name) ?? star ?? 0;
  let best: ContentCoding | undefined;
  let bestQ = 0;
  for (const coding of offered) {
    const q = weightOf(coding);
    if (q > bestQ) {
      best = coding;
      bestQ = q;
    }
  }
  const identityQ = weights.get('identity') ?? (star !== undefined && star === 0 ? 0 : 1);
  const identityAcceptable = identityQ > 0;
  if (best === undefined || (weights.has('identity') && identityQ > bestQ)) return { coding: 'identity', identityAcceptable };
  return { coding: best, identityAcceptable };
}
