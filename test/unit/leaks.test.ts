/**
 * Leaked-key reports, the pure parts: the pattern the docs give GitHub matches every generated key
 * value and nothing around it; a report is checked (signature over the raw body, by the key its
 * identifier names; size, count, JSON) before anything in it is used; the key list is fetched again
 * for an unknown identifier at most once a minute; the feedback looks up only what may be a key.
 */
import fs from 'node:fs';
import path from 'node:path';
import { DEMO_KEY_HASHES } from '../../gateway/keys/demo-keys';
import { generateKeyValue, KEY_PREFIX, sha256Hex } from '../../gateway/keys/key-format';
import { createGithubKeySource, REFETCH_INTERVAL_MS } from '../../gateway/leaks/github-keys';
import { feedbackOn } from '../../gateway/leaks/leak-feedback';
import { checkReport } from '../../gateway/leaks/leak-report';
import { keyListFile, makeSigner, match, signatureOf, startKeyListServer, type KeyListServer, type Signer } from '../kit/github-reports';
import { removeTempDirs } from '../kit/temp-files';

const DOCS = path.resolve(__dirname, '..', '..', 'docs', 'leaked-keys.md');
/** The first ```regex block of the docs: what operators register with GitHub. */
function documentedPattern(): RegExp {
  const block = /```regex\n(.+)\n```/.exec(fs.readFileSync(DOCS, 'utf8'));
  if (!block) throw new Error('docs/leaked-keys.md has no ```regex block');
  return new RegExp(block[1]!, 'g');
}

afterAll(removeTempDirs);

describe('the pattern registered with GitHub', () => {
  const pattern = documentedPattern();
  const found = (text: string): string[] => [...text.matchAll(pattern)].map((m) => m[0]);

  it('finds every generated key value, whole, in the text around it', () => {
    for (let i = 0; i < 1000; i++) {
      const value = generateKeyValue();
      expect(found(`API_KEY=${value}\n`)).toEqual([value]);
      expect(found(`"x-api-key": "${value}"`)).toEqual([value]);
      expect(found(value)).toEqual([value]);
    }
  });

  it('finds nothing that is not a whole value in the format', () => {
    const value = generateKeyValue();
    expect(value.startsWith(KEY_PREFIX)).toBe(true);
    expect(found(`${value}x`)).toEqual([]);
    expect(found(`x${value}`)).toEqual([]);
    expect(found(value.slice(0, -1))).toEqual([]);
    expect(found(`${KEY_PREFIX}${'-'.repeat(49)}`)).toEqual([]);
  });
});

describe('checking a report', () => {
  let github: Signer;
  let other: Signer;
  let list: KeyListServer;
  beforeAll(async () => {
    github = makeSigner('gh-1');
    other = makeSigner('gh-other');
    list = await startKeyListServer([github]);
  });
  afterAll(() => list.close());

  const headersFor = (body: Buffer, signer: Signer, identifier = signer.identifier) => ({ 'github-public-key-identifier': identifier, 'github-public-key-signature': signatureOf(body, signer) });
  const source = () => createGithubKeySource({ url: list.url });
  const body = Buffer.from(JSON.stringify([match('plk_whatever')]));

  it('accepts a body signed by the key its identifier names', async () => {
    expect(await checkReport(body, headersFor(body, github), source())).toEqual({ kind: 'report', tokens: [match('plk_whatever')] });
  });

  it('refuses a missing signature, another key\'s signature, a body changed after signing', async () => {
    const keys = source();
    expect(await checkReport(body, {}, keys)).toEqual({ kind: 'refused', why: 'no_signature' });
    expect(await checkReport(body, headersFor(body, other, github.identifier), keys)).toEqual({ kind: 'refused', why: 'bad_signature' });
    const changed = Buffer.from(body.toString().replace('whatever', 'whatevex'));
    expect(await checkReport(changed, headersFor(body, github), keys)).toEqual({ kind: 'refused', why: 'bad_signature' });
    expect(await checkReport(body, { ...headersFor(body, github), 'github-public-key-signature': 'bm90IGEgc2lnbmF0dXJl' }, keys)).toEqual({ kind: 'refused', why: 'bad_signature' });
  });

  it('refuses more than 1 MiB before looking at the signature, more than 1000 tokens, and what is not a report', async () => {
    const keys = source();
    const signed = async (raw: Buffer) => checkReport(raw, headersFor(raw, github), keys);
    const big = Buffer.alloc(1024 * 1024 + 1, 0x20);
    expect(await checkReport(big, headersFor(big, github), keys)).toEqual({ kind: 'refused', why: 'too_large' });
    expect(await signed(Buffer.from(JSON.stringify(Array.from({ length: 1001 }, (_, i) => match(`t${i}`)))))).toEqual({ kind: 'refused', why: 'too_many' });
    expect(await signed(Buffer.from(JSON.stringify(Array.from({ length: 1000 }, (_, i) => match(`t${i}`)))))).toMatchObject({ kind: 'report' });
    expect(await signed(Buffer.from('[{"token": '))).toEqual({ kind: 'refused', why: 'not_json' });
    expect(await signed(Buffer.from('{"token": "plk_x"}'))).toEqual({ kind: 'refused', why: 'not_a_report' });
    expect(await signed(Buffer.from('[{"type": "x"}]'))).toEqual({ kind: 'refused', why: 'not_a_report' });
  });
});

describe('the key list', () => {
  let first: Signer;
  let added: Signer;
  let list: KeyListServer;
  beforeEach(async () => {
    first = makeSigner('gh-first');
    added = makeSigner('gh-added');
    list = await startKeyListServer([first]);
  });
  afterEach(() => list.close());

  it('is fetched once, and again for an unknown identifier at most once a minute from the last attempt', async () => {
    let now = 1_000_000;
    const keys = createGithubKeySource({ url: list.url, now: () => now });
    expect((await keys.find(first.identifier)).kind).toBe('key');
    expect((await keys.find(first.identifier)).kind).toBe('key');
    expect(list.fetches).toBe(1);
    list.signers = [first, added];
    now += 1000;
    // Within the minute of the last fetch: not fetched again, the identifier is unknown.
    expect((await keys.find(added.identifier)).kind).toBe('unknown');
    expect((await keys.find('made-up')).kind).toBe('unknown');
    expect(list.fetches).toBe(1);
    now += REFETCH_INTERVAL_MS;
    expect((await keys.find(added.identifier)).kind).toBe('key');
    expect(list.fetches).toBe(2);
    now += 10;
    expect((await keys.find('made-up')).kind).toBe('unknown');
    expect(list.fetches).toBe(2);
  });

  it('out of reach when needed: unavailable, and still fetched at most once a minute', async () => {
    let now = 5_000_000;
    const keys = createGithubKeySource({ url: list.url, now: () => now });
    list.failing = true;
    expect((await keys.find(first.identifier)).kind).toBe('unavailable');
    expect((await keys.find(first.identifier)).kind).toBe('unavailable');
    expect(list.fetches).toBe(1);
    list.failing = false;
    now += REFETCH_INTERVAL_MS;
    expect((await keys.find(first.identifier)).kind).toBe('key');
    expect(list.fetches).toBe(2);
    // A known key needs no list: served from the cache while the list is away.
    list.failing = true;
    now += REFETCH_INTERVAL_MS;
    expect((await keys.find(first.identifier)).kind).toBe('key');
    expect(list.fetches).toBe(2);
  });

  it('many reports at once share one fetch', async () => {
    const keys = createGithubKeySource({ url: list.url });
    const found = await Promise.all(Array.from({ length: 20 }, () => keys.find(first.identifier)));
    expect(found.every((f) => f.kind === 'key')).toBe(true);
    expect(list.fetches).toBe(1);
  });

  it('can be a file (no outbound access); a list that is not one is unavailable', async () => {
    expect((await createGithubKeySource({ file: keyListFile([first]) }).find(first.identifier)).kind).toBe('key');
    expect((await createGithubKeySource({ file: keyListFile([first]) }).find('other')).kind).toBe('unknown');
    expect((await createGithubKeySource({ file: '/nonexistent/github-keys.json' }).find(first.identifier)).kind).toBe('unavailable');
  });
});

describe('the feedback', () => {
  it('looks up only values that may be keys (not a wrong checksum, not a demo key), each once', async () => {
    const looked: string[] = [];
    const issued = generateKeyValue();
    const mark = async (hash: string) => (looked.push(hash), hash === sha256Hex(issued));
    const wrongChecksum = `${issued.slice(0, -1)}${issued.endsWith('A') ? 'B' : 'A'}`;
    // The demo value the README publishes: recognised by its hash, never looked up.
    const demoValue = 'demo-standard-7Qx2mR9vK4';
    expect(DEMO_KEY_HASHES.has(sha256Hex(demoValue))).toBe(true);
    const imported = 'an-imported-key-of-another-format';
    const { feedback, confirmed } = await feedbackOn([match(issued), match(wrongChecksum), match(imported), match(issued), match(demoValue)], mark);
    expect(feedback.map((f) => f.label)).toEqual(['true_positive', 'false_positive', 'false_positive', 'true_positive', 'false_positive']);
    expect(feedback[0]).toEqual({ token_raw: issued, token_type: 'listings_gateway_api_key', label: 'true_positive' });
    expect(looked).toEqual([sha256Hex(issued), sha256Hex(imported)]);
    expect(confirmed).toBe(1);
  });
});
