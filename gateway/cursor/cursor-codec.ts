// gateway/cursor/: the public list cursors: encrypted and bound to their filters (compact JWE, dir + A256GCM
// with node:crypto), with a kid so keys rotate.
import { createCipheriv, createDecipheriv, createHash, createSecretKey, randomFillSync, type KeyObject } from 'node:crypto';
import { ISSUED_CURSORS_BOUND, issuedCursors, type CursorClaims } from './issued-cursors';

/** The filters a cursor is bound to. An omitted optional filter is part of the binding too. */
export interface CursorFilters {
  readonly country: string;
  readonly listingType?: string;
  readonly propertyType?: string;
}

export type CursorCheck =
  | { readonly kind: 'valid'; readonly position: string }
  | { readonly kind: 'invalid'; readonly reason: 'malformed' | 'undecryptable' | 'expired' | 'other_key' | 'other_filters' };

export interface CursorCodec {
  issue(keyId: string, filters: CursorFilters, position: string): string;
  open(token: string, keyId: string, filters: CursorFilters): CursorCheck;
}

export interface CursorCodecOptions {
  /** base64url of 32 bytes: the secret new cursors are encrypted with. */
  readonly encryptionSecret: string;
  /** Retired secrets still accepted for decryption during a rotation. */
  readonly previousSecrets?: readonly string[];
  readonly ttlSeconds: number;
  /** How many cursors this process issued are remembered, so opening them skips the decryption (0: none). */
  readonly rememberIssued?: number;
}

/** Cursors above this size are refused before any decryption is attempted. */
export const MAX_CURSOR_LENGTH = 1024;

const IV_BYTES = 12; // 96-bit GCM nonce (RFC 7518 §5.3)
const TAG_BYTES = 16;
const IV_CHARS = 16; // base64url of 12 bytes: no padding bits, so always canonical
const TAG_CHARS = 22;
const AAD_ENCODING = 'ascii';

/**
 * Nonces for new cursors: 96 random bits each (RFC 7518 §5.3), cut from a block OpenSSL fills
 * 4 KiB at a time. One `randomBytes(12)` per cursor cost ~11 µs of a request under load (a crypto
 * job object per call; the largest single function in the profile after the socket writes), the
 * block ~0.03 µs per nonce. Each nonce is used once: the offset only moves forward and the block is
 * refilled before reuse. Node caches its `randomUUID` entropy the same way. The block lives in this
 * process only: workers (GATEWAY_WORKERS) are fresh processes with blocks of their own, never forks.
 */
const NONCE_BLOCK_BYTES = 4096;
const nonceBlock = Buffer.alloc(NONCE_BLOCK_BYTES);
let nonceOffset = NONCE_BLOCK_BYTES;

/** A fresh 12-byte nonce (a view of the block: used at once, before the block is refilled). */
function nextNonce(): Buffer {
  if (nonceOffset + IV_BYTES > NONCE_BLOCK_BYTES) {
    randomFillSync(nonceBlock);
    nonceOffset = 0;
  }
  const nonce = nonceBlock.subarray(nonceOffset, nonceOffset + IV_BYTES);
  nonceOffset += IV_BYTES;
  return nonce;
}

/** The key id of a secret: a short hash, so the header never reveals the secret. */
export const cursorKeyId = (secret: string): string =>
  createHash('sha256').update(`cursor-kid:${secret}`).digest('base64url').slice(0, 8);

const filtersHashes = new Map<string, string>();
/** Bound on memoised filter hashes: filters are validated, so the set is small; the bound is a guard. */
const MAX_MEMOISED_FILTERS = 10_000;

/** A short hash of the filters, memoised: every page of a walk hashes the same filters twice. */
export function filtersHash(f: CursorFilters): string {
  const text = `${f.country}\n${f.listingType ?? ''}\n${f.propertyType ?? ''}`;
  let hash = filtersHashes.get(text);
  if (hash === undefined) {
    hash = createHash('sha256').update(text).digest('base64url').slice(0, 16);
    if (filtersHashes.size >= MAX_MEMOISED_FILTERS) filtersHashes.clear();
    filtersHashes.set(text, hash);
  }
  return hash;
}

/** The claims inside a cursor: k key id, f filters hash, p position in the data service, exp expiry (seconds since the epoch). Extra claims are ignored when opening. */
type CursorPayload = CursorClaims;

/** True when `segment` is canonical base64url: re-encoding its bytes gives it back. */
const isCanonical = (segment: string, bytes: Buffer): boolean => bytes.toString('base64url') === segment;

interface DecryptionKey {
  readonly key: KeyObject;
  /** The protected header this key's cursors carry, base64url: also the GCM additional data. */
  readonly header: string;
}

function toKey(secret: string): DecryptionKey {
  const bytes = Buffer.from(secret, 'base64url');
  if (bytes.length !== 32) throw new Error('a cursor secret must be base64url of 32 bytes');
  return {
    key: createSecretKey(bytes),
    header: Buffer.from(JSON.stringify({ alg: 'dir', enc: 'A256GCM', kid: cursorKeyId(secret) })).toString('base64url'),
  };
}

/**
 * Opaque cursors: compact JWE (RFC 7516) with `dir` and `A256GCM`, whose encrypted payload binds
 * the key id, a hash of the filters, the data service's position and an expiry. The `kid` header
 * names the secret, so secrets rotate: one encrypts, all listed decrypt.
 *
 * Written on node:crypto rather than with jose: the same standard tokens (jose opens ours and we
 * open jose's, see the unit test) for ~20 µs instead of ~40 µs per page (decrypt + encrypt, measured
 * in bench/levers.ts), without the promise hops of jose's asynchronous API, and
 * a narrower acceptance rule: the protected header must be exactly one this gateway issues, so no
 * header field (`alg`, `enc`, `zip`, `crit`, ...) is ever interpreted from the caller's input.
 */
export function createCursorCodec(options: CursorCodecOptions): CursorCodec {
  if (!Number.isFinite(options.ttlSeconds) || options.ttlSeconds <= 0) throw new Error('cursor lifetime must be a positive number of seconds');
  const encryption = toKey(options.encryptionSecret);
  const encryptionAad = Buffer.from(encryption.header, AAD_ENCODING);
  const byHeader = new Map<string, DecryptionKey>([[encryption.header, encryption]]);
  for (const secret of options.previousSecrets ?? []) {
    const key = toKey(secret);
    if (!byHeader.has(key.header)) byHeader.set(key.header, key);
  }
  const issued = issuedCursors(options.rememberIssued ?? ISSUED_CURSORS_BOUND);

  function issue(keyId: string, filters: CursorFilters, position: string): string {
    const payload: CursorPayload = { k: keyId, f: filtersHash(filters), p: position, exp: Math.floor(Date.now() / 1000) + options.ttlSeconds };
    const iv = nextNonce();
    const cipher = createCipheriv('aes-256-gcm', encryption.key, iv);
    cipher.setAAD(encryptionAad);
    const ciphertext = Buffer.concat([cipher.update(JSON.stringify(payload), 'utf8'), cipher.final()]);
    const token = `${encryption.header}..${iv.toString('base64url')}.${ciphertext.toString('base64url')}.${cipher.getAuthTag().toString('base64url')}`;
    issued.remember(token, payload);
    return token;
  }

  /** The payload's claims, or why there are none. */
  function decrypt(token: string): Record<string, unknown> | 'malformed' | 'undecryptable' {
    if (typeof token !== 'string' || token.length > MAX_CURSOR_LENGTH) return 'malformed';
    const parts = token.split('.');
    if (parts.length !== 5 || parts[1] !== '') return 'malformed';
    const [header, , ivText, ciphertextText, tagText] = parts as [string, string, string, string, string];
    if (ivText.length !== IV_CHARS || tagText.length !== TAG_CHARS || ciphertextText === '') return 'malformed';
    const iv = Buffer.from(ivText, 'base64url');
    const ciphertext = Buffer.from(ciphertextText, 'base64url');
    const tag = Buffer.from(tagText, 'base64url');
    // Buffer.from ignores characters outside the alphabet and unused trailing bits: without this
    // check two different strings would open as the same cursor, and a changed character could go unnoticed.
    if (iv.length !== IV_BYTES || tag.length !== TAG_BYTES || !isCanonical(ivText, iv) || !isCanonical(tagText, tag) || !isCanonical(ciphertextText, ciphertext)) {
      return 'malformed';
    }
    const key = byHeader.get(header);
    if (!key) return 'undecryptable'; // another algorithm, an unknown or retired secret, a forged header
    let plaintext: string;
    try {
      const decipher = createDecipheriv('aes-256-gcm', key.key, iv, { authTagLength: TAG_BYTES });
      decipher.setAAD(Buffer.from(header, AAD_ENCODING));
      decipher.setAuthTag(tag);
      plaintext = Buffer.concat([decipher.update(ciphertext), decipher.final()]).toString('utf8');
    } catch {
      return 'undecryptable';
    }
    try {
      const claims: unknown = JSON.parse(plaintext);
      return typeof claims === 'object' && claims !== null && !Array.isArray(claims) ? (claims as Record<string, unknown>) : 'malformed';
    } catch {
      return 'malformed';
    }
  }

  return {
    issue,

    open(token, keyId, filters) {
      // A cursor this process issued opens from memory (the same string, so the same bytes it
      // encrypted); anything else, tampered ones included, goes through the decryption.
      const claims = (typeof token === 'string' ? issued.recall(token) : undefined) as Record<string, unknown> | undefined ?? decrypt(token);
      const invalid = (reason: Extract<CursorCheck, { kind: 'invalid' }>['reason']): CursorCheck => ({ kind: 'invalid', reason });
      if (typeof claims === 'string') return invalid(claims);
      const now = Date.now() / 1000;
      if (typeof claims.exp !== 'number' || !Number.isFinite(claims.exp)) return invalid('malformed');
      if (claims.exp <= now) return invalid('expired');
      if (claims.nbf !== undefined && (typeof claims.nbf !== 'number' || claims.nbf > now)) return invalid('malformed');
      if (typeof claims.p !== 'string' || typeof claims.k !== 'string' || typeof claims.f !== 'string') return invalid('malformed');
      if (claims.k !== keyId) return invalid('other_key');
      if (claims.f !== filtersHash(filters)) return invalid('other_filters');
      return { kind: 'valid', position: claims.p };
    },
  };
}
