import { randomBytes } from 'node:crypto';
import { CompactEncrypt, EncryptJWT, jwtDecrypt } from 'jose';
import { createCursorCodec, cursorKeyId, filtersHash, MAX_CURSOR_LENGTH } from '../../gateway/cursor/cursor-codec';

const secretA = randomBytes(32).toString('base64url');
const secretB = randomBytes(32).toString('base64url');
const filters = { country: 'GB', listingType: 'sale' };

describe('cursor codec', () => {
  const codec = createCursorCodec({ encryptionSecret: secretA, ttlSeconds: 60 });

  it('round-trips the position for the same key and filters, and is opaque', async () => {
    const token = codec.issue('key-1', filters, 'GB-000123');
    expect(token).not.toContain('GB-000123');
    expect(Buffer.from(token.split('.')[3]!, 'base64url').toString('latin1')).not.toContain('key-1');
    expect(codec.open(token, 'key-1', filters)).toEqual({ kind: 'valid', position: 'GB-000123' });
  });

  it('binds the key and every filter, an omitted optional filter included', async () => {
    const token = codec.issue('key-1', filters, 'p');
    expect(codec.open(token, 'key-2', filters)).toMatchObject({ kind: 'invalid', reason: 'other_key' });
    expect(codec.open(token, 'key-1', { country: 'GB' })).toMatchObject({ reason: 'other_filters' });
    expect(codec.open(token, 'key-1', { ...filters, propertyType: 'land' })).toMatchObject({ reason: 'other_filters' });
    expect(codec.open(token, 'key-1', { country: 'FR', listingType: 'sale' })).toMatchObject({ reason: 'other_filters' });
  });

  it('refuses every single-character change', async () => {
    const token = codec.issue('key-1', filters, 'p');
    for (let i = 0; i < token.length; i++) {
      const swapped = token[i] === 'A' ? 'B' : 'A';
      const tampered = token.slice(0, i) + swapped + token.slice(i + 1);
      if (tampered === token) continue;
      const check = codec.open(tampered, 'key-1', filters);
      expect(check.kind).toBe('invalid');
    }
  });

  it('refuses expired cursors', async () => {
    const shortLived = createCursorCodec({ encryptionSecret: secretA, ttlSeconds: 1 });
    const token = shortLived.issue('k', filters, 'p');
    await new Promise((r) => setTimeout(r, 2100));
    expect(shortLived.open(token, 'k', filters)).toEqual({ kind: 'invalid', reason: 'expired' });
  });

  it('rotates: the previous secret still decrypts, a retired one does not', async () => {
    const old = codec.issue('k', filters, 'p');
    const rotated = createCursorCodec({ encryptionSecret: secretB, previousSecrets: [secretA], ttlSeconds: 60 });
    expect(rotated.open(old, 'k', filters)).toMatchObject({ kind: 'valid' });
    const retired = createCursorCodec({ encryptionSecret: secretB, ttlSeconds: 60 });
    expect(retired.open(old, 'k', filters)).toMatchObject({ kind: 'invalid' });
  });

  it('refuses garbage, oversize tokens and other algorithms', async () => {
    for (const garbage of ['', 'abc', 'a.b.c.d.e', '....', '!!.!!.!!.!!.!!', 'x'.repeat(MAX_CURSOR_LENGTH + 1)]) {
      expect(codec.open(garbage, 'k', filters)).toMatchObject({ kind: 'invalid' });
    }
    const key = Buffer.from(secretA, 'base64url');
    const payload = new TextEncoder().encode(JSON.stringify({ k: 'k', f: filtersHash(filters), p: 'p', exp: 9999999999 }));
    const otherEnc = await new CompactEncrypt(payload)
      .setProtectedHeader({ alg: 'dir', enc: 'A128CBC-HS256', kid: cursorKeyId(secretA) })
      .encrypt(key);
    expect(codec.open(otherEnc, 'k', filters)).toMatchObject({ kind: 'invalid' });
    const crit = await new CompactEncrypt(payload)
      .setProtectedHeader({ alg: 'dir', enc: 'A256GCM', kid: cursorKeyId(secretA), crit: ['x-custom'], 'x-custom': 1 } as never)
      // Declared as understood, or jose refuses to make the token at all (and nothing would be checked).
      .encrypt(key, { crit: { 'x-custom': true } });
    expect(codec.open(crit, 'k', filters)).toMatchObject({ kind: 'invalid' });
    const unknownKid = await new CompactEncrypt(payload).setProtectedHeader({ alg: 'dir', enc: 'A256GCM', kid: 'nope' }).encrypt(key);
    expect(codec.open(unknownKid, 'k', filters)).toMatchObject({ kind: 'invalid' });
    // A token made with the right key and algorithm but without an expiry is refused too.
    const noExp = await new CompactEncrypt(new TextEncoder().encode(JSON.stringify({ k: 'k', f: filtersHash(filters), p: 'p' })))
      .setProtectedHeader({ alg: 'dir', enc: 'A256GCM', kid: cursorKeyId(secretA) })
      .encrypt(key);
    expect(codec.open(noExp, 'k', filters)).toMatchObject({ kind: 'invalid' });
  });

  it('writes standard compact JWE: jose opens the cursors it issues, and it opens jose\'s', async () => {
    const key = Buffer.from(secretA, 'base64url');
    const token = codec.issue('key-1', filters, 'GB-000123');
    const { payload, protectedHeader } = await jwtDecrypt(token, key, { keyManagementAlgorithms: ['dir'], contentEncryptionAlgorithms: ['A256GCM'] });
    expect(protectedHeader).toEqual({ alg: 'dir', enc: 'A256GCM', kid: cursorKeyId(secretA) });
    expect(payload).toMatchObject({ k: 'key-1', f: filtersHash(filters), p: 'GB-000123' });
    expect(payload.exp).toBeGreaterThan(Date.now() / 1000 + 50);
    const fromJose = await new EncryptJWT({ k: 'key-1', f: filtersHash(filters), p: 'GB-000456' })
      .setProtectedHeader({ alg: 'dir', enc: 'A256GCM', kid: cursorKeyId(secretA) })
      .setExpirationTime('1m')
      .encrypt(key);
    expect(codec.open(fromJose, 'key-1', filters)).toEqual({ kind: 'valid', position: 'GB-000456' });
  });

  it('never issues the same nonce twice', () => {
    const nonces = new Set<string>();
    for (let i = 0; i < 10_000; i++) nonces.add(codec.issue('k', filters, 'p').split('.')[2]!);
    expect(nonces.size).toBe(10_000);
  });

  it('refuses every other spelling of an issued cursor: padding, the +/ alphabet, whitespace, unused bits, an encrypted-key part', () => {
    const token = codec.issue('key-1', filters, 'p');
    const [header, , iv, ciphertext, tag] = token.split('.') as [string, string, string, string, string];
    const flipLastBits = (segment: string): string => {
      const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
      const last = alphabet.indexOf(segment[segment.length - 1]!);
      return segment.slice(0, -1) + alphabet[last ^ 1]!; // the low bit of a 22-character tag's last character is unused
    };
    const variants = [
      `${header}..${iv}.${ciphertext}.${tag}==`,
      `${header}..${iv}.${ciphertext}=.${tag}`,
      token.replace(/-/g, '+').replace(/_/g, '/'),
      ` ${token}`,
      `${token}\n`,
      `${header}..${iv}.${ciphertext}.${flipLastBits(tag)}`,
      `${header}.AAAA.${iv}.${ciphertext}.${tag}`,
      `${header}..${iv}.${ciphertext}.${'A'.repeat(22)}`,
      `${Buffer.from(JSON.stringify({ enc: 'A256GCM', alg: 'dir', kid: cursorKeyId(secretA) })).toString('base64url')}..${iv}.${ciphertext}.${tag}`,
    ];
    for (const variant of variants) {
      if (variant === token) continue;
      expect(codec.open(variant, 'key-1', filters)).toMatchObject({ kind: 'invalid' });
    }
    expect(codec.open(undefined as unknown as string, 'key-1', filters)).toMatchObject({ kind: 'invalid', reason: 'malformed' });
  });

  it('refuses to be built with a secret that is not 32 bytes or a lifetime that is not a positive number', () => {
    expect(() => createCursorCodec({ encryptionSecret: 'AAAA', ttlSeconds: 60 })).toThrow('32 bytes');
    expect(() => createCursorCodec({ encryptionSecret: secretA, previousSecrets: ['AAAA'], ttlSeconds: 60 })).toThrow('32 bytes');
    expect(() => createCursorCodec({ encryptionSecret: secretA, ttlSeconds: Number.NaN })).toThrow('lifetime');
    expect(() => createCursorCodec({ encryptionSecret: secretA, ttlSeconds: 0 })).toThrow('lifetime');
  });

  it('refuses a cursor not yet valid (nbf in the future) and one whose claims are not an object', async () => {
    const key = Buffer.from(secretA, 'base64url');
    const header = { alg: 'dir', enc: 'A256GCM', kid: cursorKeyId(secretA) };
    const exp = Math.floor(Date.now() / 1000) + 60;
    const early = await new CompactEncrypt(new TextEncoder().encode(JSON.stringify({ k: 'k', f: filtersHash(filters), p: 'p', exp, nbf: exp })))
      .setProtectedHeader(header)
      .encrypt(key);
    expect(codec.open(early, 'k', filters)).toMatchObject({ kind: 'invalid' });
    for (const claims of ['[1]', '"p"', 'null', '12', 'not json']) {
      const token = await new CompactEncrypt(new TextEncoder().encode(claims)).setProtectedHeader(header).encrypt(key);
      expect(codec.open(token, 'k', filters)).toMatchObject({ kind: 'invalid', reason: 'malformed' });
    }
  });
});
