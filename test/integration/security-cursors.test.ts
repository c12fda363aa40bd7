/**
 * Cursors under attack. gateway-cursors.test.ts holds the cursor contract (bound to key and
 * filters, expiry, rotation with a previous secret, a retired secret refused, garbage, a changed
 * character in each part, over 1024 characters). This suite goes further, with cursors built by
 * hand from the shared secret (an independent compact-JWE encoder, checked by a control that is
 * accepted):
 *
 * - every character changed, every byte flipped, every truncation of an issued cursor;
 * - another `alg` or `enc`, `zip`, `crit`, an unknown, missing or mismatched `kid`;
 * - well-encrypted payloads that are wrong: no or a past `exp`, a future `nbf`, another key,
 *   other filters, missing or mistyped fields, not JSON;
 * - a cursor that would be valid but is over 1024 characters (refused before decryption), and one
 *   of exactly 1024 (accepted).
 *
 * Every refusal is exactly 400 `invalid_cursor`, and never reaches the data service.
 */
import { createCipheriv, randomBytes } from 'node:crypto';
import { deflateRawSync } from 'node:zlib';
import { cursorKeyId, filtersHash, type CursorFilters } from '../../gateway/cursor/cursor-codec';
import {
  UNLIMITED,
  cursorSecret,
  expectError,
  expectKeyedSuccess,
  randomKeyValue,
  send,
  startStack,
  type Answer,
  type KeySpec,
  type Stack,
} from '../kit/gateway-stack';
import { startStubUpstream, type StubUpstream } from '../kit/stub-upstream';

const key = (id: string): KeySpec => ({ id, value: randomKeyValue(id), tier: 'standard', countries: ['GB', 'FR'], address: '127.0.0.1', status: 'active', limits: UNLIMITED });

const SECRET = cursorSecret();
const PREVIOUS = cursorSecret();
const RETIRED = cursorSecret();
const GB: CursorFilters = { country: 'GB' };

let stub: StubUpstream;
let stack: Stack;

beforeAll(async () => {
  stub = await startStubUpstream();
  stack = await startStack({ keys: [key('c1'), key('c2')], backendUrl: stub.url, cursorSecret: SECRET, gateways: [{ CURSOR_PREVIOUS_SECRETS: PREVIOUS }] });
});
afterAll(async () => {
  await stack?.stop();
  await stub?.close();
});

// --- an independent compact JWE (dir + AES-GCM) encoder ---------------------------------------

const b64u = (b: Buffer | string): string => Buffer.from(b).toString('base64url');
const keyBytes = (secret: string): Buffer => Buffer.from(secret, 'base64url');

interface Forge {
  header?: Record<string, unknown>;
  /** The plaintext: an object (JSON-encoded) or raw bytes. */
  payload?: Record<string, unknown> | Buffer;
  secret?: string;
  /** Bytes of the content key (default: the whole secret, 32 bytes for A256GCM). */
  keyLength?: 16 | 24 | 32;
}

const now = (): number => Math.floor(Date.now() / 1000);
const goodPayload = (over: Record<string, unknown> = {}): Record<string, unknown> => ({ k: 'c1', f: filtersHash(GB), p: 'pos-3', exp: now() + 600, ...over });

function forge(o: Forge = {}): string {
  const secret = o.secret ?? SECRET;
  const header = o.header ?? { alg: 'dir', enc: 'A256GCM', kid: cursorKeyId(secret) };
  const protectedHeader = b64u(JSON.stringify(header));
  const plaintext = Buffer.isBuffer(o.payload) ? o.payload : Buffer.from(JSON.stringify(o.payload ?? goodPayload()));
  const length = o.keyLength ?? 32;
  const iv = randomBytes(12);
  const cipher = createCipheriv(`aes-${length * 8}-gcm` as 'aes-256-gcm', keyBytes(secret).subarray(0, length), iv);
  cipher.setAAD(Buffer.from(protectedHeader, 'ascii'));
  const ciphertext = Buffer.concat([cipher.update(plaintext), cipher.final()]);
  return `${protectedHeader}..${b64u(iv)}.${b64u(ciphertext)}.${b64u(cipher.getAuthTag())}`;
}

// --- requests ---------------------------------------------------------------------------------

let sequence = 0;
async function page(cursor: string, query = 'country=GB', keyId = 'c1'): Promise<{ answer: Answer; upstream: string[] }> {
  const id = `sec-cur-${++sequence}`;
  const answer = await send(stack.url, `/v1/properties?${query}&cursor=${encodeURIComponent(cursor)}`, { headers: { 'x-api-key': stack.key(keyId).value, 'x-request-id': id } });
  return { answer, upstream: stub.byRequestId(id).map((r) => r.url) };
}

async function expectRefused(cursor: string, label: string, query?: string, keyId?: string): Promise<void> {
  const { answer, upstream } = await page(cursor, query, keyId);
  try {
    expectError(answer, 'invalid_cursor');
    expect(upstream).toEqual([]);
  } catch (err) {
    throw new Error(`${label}: ${(err as Error).message}\ncursor: ${cursor.slice(0, 120)}`);
  }
}

async function expectAccepted(cursor: string, query = 'country=GB'): Promise<void> {
  const { answer, upstream } = await page(cursor, query);
  expectKeyedSuccess(answer);
  expect(upstream).toHaveLength(1);
  expect(upstream[0]).toContain('after=pos-3');
}

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

describe('controls', () => {
  test('a cursor issued by the gateway, and one forged with the secret, are accepted (the encoder is right)', async () => {
    const first = await send(stack.url, '/v1/properties?country=GB&limit=3', { headers: { 'x-api-key': stack.key('c1').value } });
    expectKeyedSuccess(first);
    await expectAccepted(first.body.next_cursor);
    await expectAccepted(forge());
    await expectAccepted(forge({ payload: goodPayload({ extra: 'ignored' }) }));
  });

  test('one made with the previous secret is accepted during the rotation', async () => {
    await expectAccepted(forge({ secret: PREVIOUS }));
  });
});

describe('an issued cursor, altered', () => {
  let issued: string;
  beforeAll(async () => {
    const first = await send(stack.url, '/v1/properties?country=GB&limit=3', { headers: { 'x-api-key': stack.key('c1').value } });
    issued = first.body.next_cursor;
  });

  test('every character changed, one at a time', async () => {
    let checked = 0;
    for (let i = 0; i < issued.length; i++) {
      if (issued[i] === '.') continue;
      const replacement = ALPHABET[(ALPHABET.indexOf(issued[i]!) + 1) % 64]!;
      await expectRefused(issued.slice(0, i) + replacement + issued.slice(i + 1), `character ${i}`);
      checked++;
    }
    expect(checked).toBeGreaterThan(150);
  }, 60_000);

  test('every byte of every part flipped, one at a time', async () => {
    const parts = issued.split('.');
    let checked = 0;
    for (let p = 0; p < parts.length; p++) {
      const bytes = Buffer.from(parts[p]!, 'base64url');
      for (let i = 0; i < bytes.length; i++) {
        const flipped = Buffer.from(bytes);
        flipped[i] = flipped[i]! ^ 0xff;
        const altered = [...parts];
        altered[p] = b64u(flipped);
        await expectRefused(altered.join('.'), `part ${p} byte ${i}`);
        checked++;
      }
    }
    expect(checked).toBeGreaterThan(100);
  }, 60_000);

  test('every truncation, and parts dropped, repeated, reordered or added', async () => {
    for (let n = 1; n < issued.length; n++) await expectRefused(issued.slice(0, n), `first ${n} characters`);
    const [h, , iv, ct, tag] = issued.split('.') as [string, string, string, string, string];
    for (const variant of [`${h}.${iv}.${ct}.${tag}`, `${h}..${iv}.${ct}`, `${h}..${iv}.${ct}.${tag}.${tag}`, `${h}.AAAA.${iv}.${ct}.${tag}`, `${h}..${ct}.${iv}.${tag}`, `${h}..${iv}.${ct}${ct}.${tag}`, `${issued}.`, `.${issued}`, `${issued}=`, issued.replace(/\./g, '%2E')]) {
      await expectRefused(variant, variant.slice(0, 40));
    }
  }, 60_000);
});

describe('forged headers, encrypted with the real secret', () => {
  const kid = (): string => cursorKeyId(SECRET);
  const CASES: Array<[string, () => string]> = [
    ['alg none', () => forge({ header: { alg: 'none', enc: 'A256GCM', kid: kid() } })],
    ['alg A256KW', () => forge({ header: { alg: 'A256KW', enc: 'A256GCM', kid: kid() } })],
    ['alg RSA-OAEP', () => forge({ header: { alg: 'RSA-OAEP', enc: 'A256GCM', kid: kid() } })],
    ['alg DIR (case)', () => forge({ header: { alg: 'DIR', enc: 'A256GCM', kid: kid() } })],
    ['no alg', () => forge({ header: { enc: 'A256GCM', kid: kid() } })],
    ['enc A128GCM (with a 16-byte key)', () => forge({ header: { alg: 'dir', enc: 'A128GCM', kid: kid() }, keyLength: 16 })],
    ['enc A192GCM (with a 24-byte key)', () => forge({ header: { alg: 'dir', enc: 'A192GCM', kid: kid() }, keyLength: 24 })],
    ['enc A256CBC-HS512', () => forge({ header: { alg: 'dir', enc: 'A256CBC-HS512', kid: kid() } })],
    ['no enc', () => forge({ header: { alg: 'dir', kid: kid() } })],
    ['zip DEF (deflated payload)', () => forge({ header: { alg: 'dir', enc: 'A256GCM', kid: kid(), zip: 'DEF' }, payload: deflateRawSync(Buffer.from(JSON.stringify(goodPayload()))) })],
    ['crit naming an unknown parameter', () => forge({ header: { alg: 'dir', enc: 'A256GCM', kid: kid(), crit: ['x-must'], 'x-must': true } })],
    ['crit naming exp', () => forge({ header: { alg: 'dir', enc: 'A256GCM', kid: kid(), crit: ['exp'], exp: now() + 600 } })],
    ['crit empty', () => forge({ header: { alg: 'dir', enc: 'A256GCM', kid: kid(), crit: [] } })],
    ['b64 false', () => forge({ header: { alg: 'dir', enc: 'A256GCM', kid: kid(), crit: ['b64'], b64: false } })],
    ['an unknown kid', () => forge({ header: { alg: 'dir', enc: 'A256GCM', kid: 'AAAAAAAA' } })],
    ['no kid', () => forge({ header: { alg: 'dir', enc: 'A256GCM' } })],
    ['a numeric kid', () => forge({ header: { alg: 'dir', enc: 'A256GCM', kid: 12345678 } })],
    ['a kid that is the secret itself', () => forge({ header: { alg: 'dir', enc: 'A256GCM', kid: SECRET } })],
    ['the kid of the current secret, encrypted with a retired one', () => forge({ secret: RETIRED, header: { alg: 'dir', enc: 'A256GCM', kid: kid() } })],
    ['a retired secret with its own kid', () => forge({ secret: RETIRED })],
    ['the kid of the previous secret, encrypted with the current one', () => forge({ header: { alg: 'dir', enc: 'A256GCM', kid: cursorKeyId(PREVIOUS) } })],
    ['a header that is not an object', () => `${b64u('"dir"')}..${b64u(randomBytes(12))}.${b64u(randomBytes(40))}.${b64u(randomBytes(16))}`],
    ['a header that is not JSON', () => `${b64u('{alg:dir')}..${b64u(randomBytes(12))}.${b64u(randomBytes(40))}.${b64u(randomBytes(16))}`],
    ['a short iv', () => { const [h, , , ct, tag] = forge().split('.'); return `${h}..${b64u(randomBytes(8))}.${ct}.${tag}`; }],
    ['a short tag', () => { const [h, , iv, ct, tag] = forge().split('.'); return `${h}..${iv}.${ct}.${tag!.slice(0, 10)}`; }],
    ['an empty ciphertext', () => { const [h, , iv, , tag] = forge().split('.'); return `${h}..${iv}..${tag}`; }],
    ['a JWS (signed, not encrypted)', () => `${b64u('{"alg":"HS256"}')}.${b64u(JSON.stringify(goodPayload()))}.${b64u(randomBytes(32))}`],
    ['JSON serialisation', () => JSON.stringify({ protected: b64u('{"alg":"dir","enc":"A256GCM"}'), iv: 'x', ciphertext: 'y', tag: 'z' })],
  ];

  test.each(CASES)('%s → invalid_cursor', async (label, make) => {
    await expectRefused(make(), label);
  });
});

describe('well-encrypted payloads that are wrong', () => {
  const CASES: Array<[string, () => string, { query?: string; keyId?: string }]> = [
    ['no exp', () => forge({ payload: { k: 'c1', f: filtersHash(GB), p: 'pos-3' } }), {}],
    ['exp in the past', () => forge({ payload: goodPayload({ exp: now() - 5 }) }), {}],
    ['exp as a string', () => forge({ payload: goodPayload({ exp: String(now() + 600) }) }), {}],
    ['nbf in the future', () => forge({ payload: goodPayload({ nbf: now() + 600 }) }), {}],
    ['issued for another key', () => forge({ payload: goodPayload({ k: 'c2' }) }), {}],
    ['issued for other filters', () => forge({ payload: goodPayload({ f: filtersHash({ country: 'FR' }) }) }), {}],
    ['issued for GB, used with an added filter', () => forge(), { query: 'country=GB&listing_type=sale' }],
    ['issued for GB with a filter, used without it', () => forge({ payload: goodPayload({ f: filtersHash({ country: 'GB', listingType: 'sale' }) }) }), {}],
    ['c1\'s cursor used by c2', () => forge(), { keyId: 'c2' }],
    ['no position', () => forge({ payload: { k: 'c1', f: filtersHash(GB), exp: now() + 600 } }), {}],
    ['a numeric position', () => forge({ payload: goodPayload({ p: 3 }) }), {}],
    ['a numeric key id', () => forge({ payload: goodPayload({ k: 1 }) }), {}],
    ['the filters as an object', () => forge({ payload: goodPayload({ f: { country: 'GB' } }) }), {}],
    ['a JSON array', () => forge({ payload: Buffer.from('[1,2,3]') }), {}],
    ['a JSON string', () => forge({ payload: Buffer.from('"pos-3"') }), {}],
    ['null', () => forge({ payload: Buffer.from('null') }), {}],
    ['not JSON', () => forge({ payload: Buffer.from('p=pos-3;k=c1') }), {}],
    ['empty', () => forge({ payload: Buffer.alloc(0) }), {}],
  ];

  test.each(CASES)('%s → invalid_cursor', async (label, make, { query, keyId }) => {
    await expectRefused(make(), label, query, keyId);
  });
});

describe('size', () => {
  /** A valid cursor (padded with an ignored claim) of exactly `length` characters, or with `atLeast`, the shortest not below it. */
  function validOfLength(length: number, atLeast = false): string {
    for (let pad = 0; pad < 4000; pad++) {
      const token = forge({ payload: goodPayload({ pad: 'x'.repeat(pad) }) });
      if (token.length === length || (atLeast && token.length > length)) return token;
    }
    throw new Error(`no padding gives a cursor of ${length} characters`);
  }

  test('a cursor that would be valid but is over 1024 characters → invalid_cursor (refused before decryption)', async () => {
    for (const length of [1025, 1100, 1500, 3000, 5000]) {
      const token = validOfLength(length, true);
      expect(token.length).toBeGreaterThan(1024);
      await expectRefused(token, `${token.length} characters`);
    }
  });

  test('a valid cursor of exactly 1024 characters is accepted', async () => {
    const token = validOfLength(1024);
    expect(token).toHaveLength(1024);
    await expectAccepted(token);
  });
});
