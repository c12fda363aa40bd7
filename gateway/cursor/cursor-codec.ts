import { createHash, createSecretKey, type KeyObject } from 'node:crypto';
import { EncryptJWT, jwtDecrypt, type JWEHeaderParameters } from 'jose';

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
  issue(keyId: string, filters: CursorFilters, position: string): Promise<string>;
  open(token: string, keyId: string, filters: CursorFilters): Promise<CursorCheck>;
}

export interface CursorCodecOptions {
  /** base64url of 32 bytes: the secret new cursors are encrypted with. */
  readonly encryptionSecret: string;
  /** Retired secrets still accepted for decryption during a rotation. */
  readonly previousSecrets?: readonly string[];
  readonly ttlSeconds: number;
}

/** Cursors above this size are refused before any decryption is attempted. */
export const MAX_CURSOR_LENGTH = 1024;
// Compact JWE with `dir`: header..iv.ciphertext.tag (the encrypted-key part is empty).
const COMPACT_DIR_JWE = /^[A-Za-z0-9_-]+\.\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;

/**
 * True when every segment is canonical base64url. The last character of a segment can carry unused
 * bits; without this check two different strings would decode to the same cursor, and a changed
 * character would go unnoticed.
 */
function isCanonical(token: string): boolean {
  for (const segment of token.split('.')) {
    if (segment && Buffer.from(segment, 'base64url').toString('base64url') !== segment) return false;
  }
  return true;
}

/** The key id of a secret: a short hash, so the header never reveals the secret. */
export const cursorKeyId = (secret: string): string =>
  createHash('sha256').update(`cursor-kid:${secret}`).digest('base64url').slice(0, 8);

export const filtersHash = (f: CursorFilters): string =>
  createHash('sha256').update(`${f.country}\n${f.listingType ?? ''}\n${f.propertyType ?? ''}`).digest('base64url').slice(0, 16);

interface CursorPayload {
  k: string; // key id
  f: string; // filters hash
  p: string; // position in the data service
}

/**
 * Opaque cursors: compact JWE (`dir`, `A256GCM`) whose encrypted payload binds the key id, a hash
 * of the filters, the data service's position and an expiry. The `kid` header names the secret, so
 * secrets rotate: one encrypts, all listed decrypt. Key objects are imported once, here.
 */
export function createCursorCodec(options: CursorCodecOptions): CursorCodec {
  const toKey = (secret: string): KeyObject => createSecretKey(Buffer.from(secret, 'base64url'));
  const encryptKid = cursorKeyId(options.encryptionSecret);
  const encryptKey = toKey(options.encryptionSecret);
  const decryptKeys = new Map<string, KeyObject>([[encryptKid, encryptKey]]);
  for (const secret of options.previousSecrets ?? []) decryptKeys.set(cursorKeyId(secret), toKey(secret));

  const keyFor = (header: JWEHeaderParameters): KeyObject => {
    const key = header.kid === undefined ? undefined : decryptKeys.get(header.kid);
    if (!key) throw new Error('unknown kid');
    return key;
  };
  const decryptOptions = {
    keyManagementAlgorithms: ['dir'],
    contentEncryptionAlgorithms: ['A256GCM'],
    requiredClaims: ['exp'],
  };

  return {
    issue(keyId, filters, position) {
      const payload: CursorPayload = { k: keyId, f: filtersHash(filters), p: position };
      return new EncryptJWT({ ...payload })
        .setProtectedHeader({ alg: 'dir', enc: 'A256GCM', kid: encryptKid })
        .setExpirationTime(Math.floor(Date.now() / 1000) + options.ttlSeconds)
        .encrypt(encryptKey);
    },

    async open(token, keyId, filters) {
      if (token.length > MAX_CURSOR_LENGTH || !COMPACT_DIR_JWE.test(token) || !isCanonical(token)) return { kind: 'invalid', reason: 'malformed' };
      let payload: Record<string, unknown>;
      try {
        ({ payload } = await jwtDecrypt(token, keyFor, decryptOptions));
      } catch (err) {
        return { kind: 'invalid', reason: (err as { code?: string }).code === 'ERR_JWT_EXPIRED' ? 'expired' : 'undecryptable' };
      }
      if (typeof payload.p !== 'string' || typeof payload.k !== 'string' || typeof payload.f !== 'string') {
        return { kind: 'invalid', reason: 'malformed' };
      }
      if (payload.k !== keyId) return { kind: 'invalid', reason: 'other_key' };
      if (payload.f !== filtersHash(filters)) return { kind: 'invalid', reason: 'other_filters' };
      return { kind: 'valid', position: payload.p };
    },
  };
}
