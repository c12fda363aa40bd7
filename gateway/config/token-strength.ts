/**
 * A token's strength as estimated from what it is made of: its length times log2 of the pool of
 * the kinds of characters it uses (digits 10, lower case 26, upper case 26, anything else 33).
 * A random 32-byte token as hex (`openssl rand -hex 32`) or base64url scores well above the bar; a
 * word or a short string does not. An estimate, not a measure: it can only refuse the obviously weak.
 */
export function estimatedBits(token: string): number {
  let pool = 0;
  if (/[0-9]/.test(token)) pool += 10;
  if (/[a-z]/.test(token)) pool += 26;
  if (/[A-Z]/.test(token)) pool += 26;
  if (/[^0-9a-zA-Z]/.test(token)) pool += 33;
  return pool === 0 ? 0 : [...token].length * Math.log2(pool);
}

/** The least strength an operator token set in the environment (ADMIN_TOKEN) must have. */
export const MIN_TOKEN_BITS = 128;
