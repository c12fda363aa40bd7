import * as crypto from 'node:crypto';
import { createCursorCodec } from '../../gateway/cursor/cursor-codec';
import { issuedCursors } from '../../gateway/cursor/issued-cursors';

// Every decryption the codec makes is counted (the real one runs).
jest.mock('node:crypto', () => {
  const actual = jest.requireActual<typeof import('node:crypto')>('node:crypto');
  return { ...actual, createDecipheriv: jest.fn(actual.createDecipheriv) };
});
const decrypt = crypto.createDecipheriv as unknown as jest.Mock;

const secret = crypto.randomBytes(32).toString('base64url');
const filters = { country: 'GB' };
const claims = (p: string) => ({ k: 'k', f: 'f', p, exp: 1 });

describe('issued cursors', () => {
  beforeEach(() => decrypt.mockClear());
  afterEach(() => jest.restoreAllMocks());

  it('is a bounded LRU: at the bound the entry used longest ago leaves, a recall makes an entry the most recent', () => {
    const lru = issuedCursors(2);
    lru.remember('a', claims('a'));
    lru.remember('b', claims('b'));
    expect(lru.recall('a')?.p).toBe('a'); // a is now the most recent
    lru.remember('c', claims('c'));
    expect(lru.size).toBe(2);
    expect(lru.recall('b')).toBeUndefined();
    expect(lru.recall('a')?.p).toBe('a');
    expect(lru.recall('c')?.p).toBe('c');
    const none = issuedCursors(0);
    none.remember('a', claims('a'));
    expect(none.recall('a')).toBeUndefined();
  });

  it('opens a cursor this codec issued without decrypting it; one from elsewhere, and a changed one, are decrypted', () => {
    const codec = createCursorCodec({ encryptionSecret: secret, ttlSeconds: 60 });
    const token = codec.issue('key-1', filters, 'GB-1');
    expect(codec.open(token, 'key-1', filters)).toEqual({ kind: 'valid', position: 'GB-1' });
    expect(decrypt).not.toHaveBeenCalled();
    // The checks on the claims still run on a remembered cursor.
    expect(codec.open(token, 'key-2', filters)).toMatchObject({ kind: 'invalid', reason: 'other_key' });
    expect(codec.open(token, 'key-1', { country: 'FR' })).toMatchObject({ kind: 'invalid', reason: 'other_filters' });
    expect(decrypt).not.toHaveBeenCalled();

    const other = createCursorCodec({ encryptionSecret: secret, ttlSeconds: 60 });
    expect(other.open(token, 'key-1', filters)).toEqual({ kind: 'valid', position: 'GB-1' });
    expect(decrypt).toHaveBeenCalledTimes(1);

    const last = token.length - 1;
    const changed = token.slice(0, last) + (token[last] === 'A' ? 'Q' : 'A');
    expect(codec.open(changed, 'key-1', filters)).toMatchObject({ kind: 'invalid' });
  });

  it('a cursor that left the bound still opens, by decryption', () => {
    const codec = createCursorCodec({ encryptionSecret: secret, ttlSeconds: 60, rememberIssued: 2 });
    const first = codec.issue('k', filters, 'p1');
    codec.issue('k', filters, 'p2');
    codec.issue('k', filters, 'p3');
    expect(codec.open(first, 'k', filters)).toEqual({ kind: 'valid', position: 'p1' });
    expect(decrypt).toHaveBeenCalledTimes(1);
  });

  it('an expired remembered cursor is refused', () => {
    const codec = createCursorCodec({ encryptionSecret: secret, ttlSeconds: 60 });
    const now = Date.now();
    const token = codec.issue('k', filters, 'p');
    jest.spyOn(Date, 'now').mockReturnValue(now + 61_000);
    expect(codec.open(token, 'k', filters)).toEqual({ kind: 'invalid', reason: 'expired' });
  });
});
