/**
 * The keys CLI on a YAML keys file: `keys validate FILE` on good and bad files, and `keys add` /
 * `pause` / `settle` / `revoke` / `delete` with `--file FILE` (or KEY_STORE=file and KEYS_FILE)
 * against a running gateway, which reloads each edit by itself. Comments survive; a refused edit
 * leaves the file byte for byte as it was.
 */
import fs from 'node:fs';
import path from 'node:path';
import { eventually, getWithKey, makeTempDir, randomKeyValue, removeTempDirs, startStack, writeTempFile, type Stack } from '../kit/gateway-stack';
import { runKeysCliWith } from '../kit/keys-cli';

const MARKER = '# a comment the operator wrote, which every edit keeps';
const existing = randomKeyValue('existing');

let stack: Stack;
let keysFile: string;

const keys = (args: string[], env: Record<string, string> = {}) => runKeysCliWith(env, args);

/** Waits until `key` gets `status` (the gateway reloads the file on its own). */
const answered = (key: string, status: number): Promise<true> =>
  eventually(`/v1/ping answered ${status}`, async () => (await getWithKey(stack.url, '/v1/ping', key)).status === status, { intervalMs: 100 });

beforeAll(async () => {
  stack = await startStack({ keys: [{ id: 'existing', value: existing, tier: 'standard', countries: ['GB'], address: '127.0.0.1', status: 'active' }] });
  keysFile = stack.keysFile;
  fs.writeFileSync(keysFile, `${MARKER}\n${fs.readFileSync(keysFile, 'utf8')}`);
}, 60_000);

afterAll(async () => {
  await stack?.stop();
  removeTempDirs();
});

describe('keys validate FILE', () => {
  it('a valid file: exit 0 and a one-line summary', async () => {
    const r = await keys(['validate', keysFile]);
    expect(r).toMatchObject({ code: 0, stderr: '' });
    expect(r.stdout).toBe(`${keysFile}: valid, 1 key (1 active)\n`);
  });

  it.each([
    ['not YAML', 'keys: [\n', /not valid YAML|bad\.yaml/],
    ['an unknown field', 'keys:\n  - {id: a, key_sha256: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa, tier: standard, countries: [GB], address: 127.0.0.1, status: active, colour: red}\n', /keys\[0\] \(id a\)/],
    ['a paused key without a reason', 'keys:\n  - {id: a, key_sha256: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa, tier: standard, countries: [GB], address: 127.0.0.1, status: paused}\n', /field "pause_reason": is required when status is paused/],
    ['a duplicate id', `keys:\n${['a', 'b'].map((c) => `  - {id: x, key_sha256: ${c.repeat(64)}, tier: standard, countries: [GB], address: 127.0.0.1, status: active}\n`).join('')}`, /keys\[1\] \(id x\): field "id": duplicate id/],
    ['17 addresses', `keys:\n  - {id: a, key_sha256: ${'a'.repeat(64)}, tier: standard, countries: [GB], addresses: [${Array.from({ length: 17 }, (_, i) => `10.0.${i}.1`).join(', ')}], status: active}\n`, /field "addresses": must list at most 16/],
    ['no file', null, /cannot read|ENOENT|no such file/i],
  ])('%s: exit 1 with one line naming the file', async (_what, text, why) => {
    const file = text === null ? path.join(makeTempDir(), 'missing.yaml') : writeTempFile('bad.yaml', text);
    const r = await keys(['validate', file]);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    const lines = r.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(file);
    expect(lines[0]).toMatch(why);
  });
});

describe('editing the keys file of a running gateway', () => {
  let added = '';

  it('keys add --file appends a valid record, prints the value once, and the gateway takes it', async () => {
    const r = await keys(['add', '--file', keysFile, '--id', 'added', '--tier', 'standard', '--countries', 'GB,fr', '--addresses', '127.0.0.0/8,2001:db8::/32', '--note', 'Added Ltd', '--per-day', '50']);
    expect(r).toMatchObject({ code: 0, stderr: '' });
    const lines = r.stdout.trim().split('\n');
    added = lines[lines.length - 1]!;
    expect(added).toMatch(/^plk_[0-9A-Za-z]{49}$/);
    const text = fs.readFileSync(keysFile, 'utf8');
    expect(text).not.toContain(added);
    expect(text.startsWith(MARKER)).toBe(true);
    expect(text).toMatch(/- id: added\n\s+key_sha256: [0-9a-f]{64}\n\s+tier: standard\n\s+countries: \[GB, FR\]\n\s+addresses: \[127\.0\.0\.0\/8, 2001:db8::\/32\]/);
    await answered(added, 200);
    expect((await keys(['validate', keysFile])).stdout).toContain('valid, 2 keys (2 active)');
  });

  it('pause, settle, revoke and delete --file: each edit is reloaded by the gateway; comments stay', async () => {
    expect((await keys(['pause', 'added', '--file', keysFile, '--reason', 'unpaid_renewal'])).code).toBe(0);
    await answered(added, 403);
    expect((await getWithKey(stack.url, '/v1/ping', added)).body).toMatchObject({ error: 'key_paused' });
    expect(fs.readFileSync(keysFile, 'utf8')).toMatch(/status: paused\n\s+pause_reason: unpaid_renewal/);
    expect((await keys(['settle', 'added', '--file', keysFile])).code).toBe(0);
    await answered(added, 200);
    expect((await keys(['revoke', 'added', '--file', keysFile])).code).toBe(0);
    await answered(added, 401);
    const deleted = await keys(['delete', 'added', '--file', keysFile]);
    expect(deleted).toMatchObject({ code: 0, stdout: `deleted key added in ${keysFile}\n` });
    const text = fs.readFileSync(keysFile, 'utf8');
    expect(text).not.toContain('id: added');
    expect(text.startsWith(MARKER)).toBe(true);
    expect((await getWithKey(stack.url, '/v1/ping', existing)).status).toBe(200);
  });

  it('KEY_STORE=file with KEYS_FILE: the same commands without --file', async () => {
    const env = { KEY_STORE: 'file', KEYS_FILE: keysFile };
    expect((await keys(['pause', 'existing', '--reason', 'payment_dispute'], env)).code).toBe(0);
    await answered(existing, 403);
    expect((await keys(['settle', 'existing'], env)).code).toBe(0);
    await answered(existing, 200);
  });

  it('a refused edit leaves the file byte for byte as it was, and the gateway serving', async () => {
    const before = fs.readFileSync(keysFile);
    const refusals: Array<[string[], RegExp]> = [
      [['add', '--file', keysFile, '--id', 'x', '--tier', 'standard', '--countries', 'GB', '--addresses', Array.from({ length: 17 }, (_, i) => `10.0.${i}.1`).join(',')], /the edit was not written: .*field "addresses": must list at most 16/],
      [['add', '--file', keysFile, '--id', 'x', '--tier', 'standard', '--countries', 'XX', '--addresses', '127.0.0.1'], /the edit was not written: .*"XX" is not an ISO 3166-1 alpha-2 code/],
      [['add', '--file', keysFile, '--id', 'existing', '--tier', 'standard', '--countries', 'GB', '--addresses', '127.0.0.1'], /a key with id "existing" already exists/],
      [['add', '--file', keysFile, '--id', 'x', '--tier', 'standard', '--countries', 'GB'], /add needs --addresses/],
      [['pause', 'nobody', '--file', keysFile, '--reason', 'unpaid_renewal'], /no key with id "nobody"/],
      [['pause', 'existing', '--file', keysFile, '--reason', 'bored'], /--reason must be one of leaked, operator, payment_dispute, unpaid_renewal, got "bored"/],
      [['delete', 'existing', '--file', keysFile], /only a revoked key can be deleted/],
      [['add', '--id', 'x', '--tier', 'standard', '--countries', 'GB', '--addresses', '127.0.0.1', '--file', path.join(makeTempDir(), 'none.yaml')], /cannot read the keys file/],
    ];
    for (const [args, why] of refusals) {
      const r = await keys(args);
      expect({ args, code: r.code, stdout: r.stdout }).toEqual({ args, code: 1, stdout: '' });
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
      expect(r.stderr).toMatch(why);
      expect(fs.readFileSync(keysFile).equals(before)).toBe(true);
    }
    expect(fs.readdirSync(path.dirname(keysFile)).filter((f) => f.endsWith('.tmp'))).toEqual([]);
    expect((await getWithKey(stack.url, '/v1/ping', existing)).status).toBe(200);
  });
});
