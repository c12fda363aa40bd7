import { randomBytes } from 'node:crypto';
import { CompactEncrypt } from 'jose';
import { createCursorCodec, cursorKeyId, filtersHash, MAX_CURSOR_LENGTH } from '../../gateway/cursor/cursor-codec';

const secretA = randomBytes(32).toString('base64url');
const secretB = randomBytes(32).toString('base64url');
const filters = { country: 'GB', listingType: 'sale' };

describe('cursor codec', () => {
  const codec = createCursorCodec({ encryptionSecret: secretA, ttlSeconds: 60 });

  it('round-trips the position for the same key and filters, and is opaque', async () => {
    const token = await codec.issue('key-1', filters, 'GB-000123');
    expect(token).not.toContain('GB-000123');
    expect(Buffer.from(token.split('.')[3]!, 'base64url').toString('latin1')).not.toContain('key-1');
    await expect(codec.open(token, 'key-1', filters)).resolves.toEqual({ kind: 'valid', position: 'GB-000123' });
  });

  it('binds the key and every filter, an omitted optional filter included', async () => {
    const token = await codec.issue('key-1', filters, 'p');
    await expect(codec.open(token, 'key-2', filters)).resolves.toMatchObject({ kind: 'invalid', reason: 'other_key' });
    await expect(codec.open(token, 'key-1', { country: 'GB' })).resolves.toMatchObject({ reason: 'other_filters' });
    await expect(codec.open(token, 'key-1', { ...filters, propertyType: 'land' })).resolves.toMatchObject({ reason: 'other_filters' });
    await expect(codec.open(token, 'key-1', { country: 'FR', listingType: 'sale' })).resolves.toMatchObject({ reason: 'other_filters' });
  });

  it('refuses every single-character change', async () => {
    const token = await codec.issue('key-1', filters, 'p');
    for (let i = 0; i < token.length; i++) {
      const swapped = token[i] === 'A' ? 'B' : 'A';
      const tampered = token.slice(0, i) + swapped + token.slice(i + 1);
      if (tampered === token) continue;
      const check = await codec.open(tampered, 'key-1', filters);
      expect(check.kind).toBe('invalid');
    }
  });

  it('refuses expired cursors', async () => {
    const shortLived = createCursorCodec({ encryptionSecret: secretA, ttlSeconds: 1 });
    const token = await shortLived.issue('k', filters, 'p');
    await new Promise((r) => setTimeout(r, 2100));
    await expect(shortLived.open(token, 'k', filters)).resolves.toEqual({ kind: 'invalid', reason: 'expired' });
  });

  it('rotates: the previous secret still decrypts, a retired one does not', async () => {
    const old = await codec.issue('k', filters, 'p');
    const rotated = createCursorCodec({ encryptionSecret: secretB, previousSecrets: [secretA], ttlSeconds: 60 });
    await expect(rotated.open(old, 'k', filters)).resolves.toMatchObject({ kind: 'valid' });
    const retired = createCursorCodec({ encryptionSecret: secretB, ttlSeconds: 60 });
    await expect(retired.open(old, 'k', filters)).resolves.toMatchObject({ kind: 'invalid' });
  });

  it('refuses garbage, oversize tokens and other algorithms', async () => {
    for (const garbage of ['', 'abc', 'a.b.c.d.e', '....', '!!.!!.!!.!!.!!', 'x'.repeat(MAX_CURSOR_LENGTH + 1)]) {
      await expect(codec.open(garbage, 'k', filters)).resolves.toMatchObject({ kind: 'invalid' });
    }
    const key = Buffer.from(secretA, 'base64url');
    const payload = new TextEncoder().encode(JSON.stringify({ k: 'k', f: filtersHash(filters), p: 'p', exp: 9999999999 }));
    const otherEnc = await new CompactEncrypt(payload)
      .setProtectedHeader({ alg: 'dir', enc: 'A128CBC-HS256', kid: cursorKeyId(secretA) })
      .encrypt(key);
    await expect(codec.open(otherEnc, 'k', filters)).resolves.toMatchObject({ kind: 'invalid' });
    const crit = await new CompactEncrypt(payload)
      .setProtectedHeader({ alg: 'dir', enc: 'A256GCM', kid: cursorKeyId(secretA), crit: ['x-custom'], 'x-custom': 1 } as never)
      .encrypt(key)
      .catch(() => undefined);
    if (crit) await expect(codec.open(crit, 'k', filters)).resolves.toMatchObject({ kind: 'invalid' });
    const unknownKid = await new CompactEncrypt(payload).setProtectedHeader({ alg: 'dir', enc: 'A256GCM', kid: 'nope' }).encrypt(key);
    await expect(codec.open(unknownKid, 'k', filters)).resolves.toMatchObject({ kind: 'invalid' });
    // A token made with the right key and algorithm but without an expiry is refused too.
    const noExp = await new CompactEncrypt(new TextEncoder().encode(JSON.stringify({ k: 'k', f: filtersHash(filters), p: 'p' })))
      .setProtectedHeader({ alg: 'dir', enc: 'A256GCM', kid: cursorKeyId(secretA) })
      .encrypt(key);
    await expect(codec.open(noExp, 'k', filters)).resolves.toMatchObject({ kind: 'invalid' });
  });
});
