/**
 * A bad configuration stops start-up: exit code 1 and exactly one stderr line naming the file
 * (or environment variable), the entry and the field; no stack trace, never "listening".
 */
import {
  gatewayEnv,
  keysFileText,
  makeTempDir,
  randomKeyValue,
  removeTempDirs,
  runToExit,
  sha256Hex,
  startGateway,
  writeGatewayConfig,
  writeKeysFile,
  writeTempFile,
  type KeySpec,
} from '../kit/gateway-stack';

const key = (id: string, over: Partial<KeySpec> = {}): KeySpec => ({
  id,
  value: randomKeyValue(id),
  tier: 'standard',
  countries: ['GB'],
  address: '127.0.0.1',
  status: 'active',
  ...over,
});

afterAll(() => removeTempDirs());

async function expectStartupFailure(env: Record<string, string>, mustName: string[]): Promise<string> {
  const result = await runToExit('gateway/main.js', env);
  expect(result.code).toBe(1);
  expect(result.stdout).not.toContain('"listening"');
  const lines = result.stderr.split('\n').filter((l) => l.trim() !== '');
  expect(lines).toHaveLength(1);
  const line = lines[0]!;
  expect(line).not.toMatch(/^\s+at /);
  for (const part of mustName) expect(line).toContain(part);
  return line;
}

/** One keys-file entry as YAML lines; a field set to `<omit>` is left out. */
const entry = (id: string, fields: Record<string, string> = {}): string[] =>
  Object.entries({
    id,
    key_sha256: sha256Hex(`value-of-${id}`),
    tier: 'standard',
    countries: '[GB]',
    address: '127.0.0.1',
    status: 'active',
    ...fields,
  })
    .filter(([, v]) => v !== '<omit>')
    .map(([k, v]) => `${k}: ${v}`);

/** A keys file as text. */
const keysYaml = (entries: string[][]): string =>
  `keys:\n${entries.map((lines) => lines.map((l, i) => `${i === 0 ? '  - ' : '    '}${l}\n`).join('')).join('')}`;

describe('a good configuration starts (control)', () => {
  test('the same helpers produce a gateway that listens', async () => {
    const dir = makeTempDir();
    const keysFile = writeTempFile('keys.yaml', keysYaml([entry('first'), entry('second')]), dir);
    const gw = await startGateway({ backendUrl: 'http://127.0.0.1:9', keysFile, gatewayConfig: writeGatewayConfig(undefined, dir) });
    expect(gw.port).toBeGreaterThan(0);
    expect(await gw.stop()).toBe(0);
  });
});

describe('keys file', () => {
  const run = (text: string, mustName: (file: string) => string[]): Promise<string> => {
    const dir = makeTempDir();
    const file = writeTempFile('keys.yaml', text, dir);
    return expectStartupFailure(gatewayEnv(file, writeGatewayConfig(undefined, dir)), mustName(file));
  };

  test.concurrent('a bad address in entry 2 names the file, the entry and the field', async () => {
    const line = await run(keysYaml([entry('first'), entry('second', { address: '300.1.2.3' })]), (f) => [f, 'second', 'address']);
    expect(line).not.toContain('first');
  });

  test.concurrent.each([
    ['a legacy IPv4 form', '127.1'],
    ['a hostname', 'localhost'],
  ])('an address that is %s is refused', async (_label, address) => {
    await run(keysYaml([entry('first'), entry('second', { address })]), (f) => [f, 'second', 'address']);
  });

  test.concurrent.each([
    ['tier', { tier: 'gold' }],
    ['countries', { countries: '[GB, XX]' }],
    ['pause_reason', { status: 'paused' }],
    ['key_sha256', { key_sha256: 'not-a-hash' }],
    ['per_minute', { limits: '{ per_minute: 0 }' }],
  ])('a bad %s in entry 2 is named', async (field, fields) => {
    await run(keysYaml([entry('first'), entry('second', fields as Record<string, string>)]), (f) => [f, 'second', field]);
  });

  test.concurrent('a duplicate id is named', async () => {
    await run(keysYaml([entry('first'), entry('first', { key_sha256: sha256Hex('other') })]), (f) => [f, 'first', 'id']);
  });

  test.concurrent('bad YAML names the file', async () => {
    await run('keys:\n  - id: [unclosed\n    tier: standard\n', (f) => [f]);
  });

  test.concurrent('a missing file names the file', async () => {
    const missing = `${makeTempDir()}/no-such-keys.yaml`;
    await expectStartupFailure(gatewayEnv(missing, writeGatewayConfig()), [missing]);
  });

  test('a keys file never holds values: the kit writes hashes only', () => {
    const spec = key('x', { value: randomKeyValue('secret') });
    const text = keysFileText([spec]);
    expect(text).not.toContain(spec.value);
    expect(text).toContain(sha256Hex(spec.value));
    expect(writeKeysFile([spec])).toMatch(/keys\.yaml$/);
  });
});

describe('gateway config file', () => {
  test.concurrent('a bad limit names the file and the field', async () => {
    const dir = makeTempDir();
    const config = writeTempFile('gateway.yaml', 'tiers:\n  standard: { per_minute: 0, per_day: 10, per_month: 100 }\n  advanced: { per_minute: 1, per_day: 10, per_month: 100 }\n', dir);
    await expectStartupFailure(gatewayEnv(writeKeysFile([key('a')], dir), config), [config, 'per_minute']);
  });

  test.concurrent('a missing gateway config names the file', async () => {
    const missing = `${makeTempDir()}/no-such-gateway.yaml`;
    await expectStartupFailure(gatewayEnv(writeKeysFile([key('a')]), missing), [missing]);
  });
});

describe('environment', () => {
  const env = (extra: Record<string, string>): Record<string, string> => gatewayEnv(writeKeysFile([key('a')]), writeGatewayConfig(), extra);

  test.concurrent.each([
    ['too short', 'c2hvcnQ'],
    ['not base64url', `${'+'.repeat(42)}=`],
  ])('a CURSOR_SECRET %s names CURSOR_SECRET', async (_label, secret) => {
    await expectStartupFailure(env({ CURSOR_SECRET: secret }), ['CURSOR_SECRET']);
  });

  test.concurrent('a bad CURSOR_PREVIOUS_SECRETS entry names it', async () => {
    await expectStartupFailure(env({ CURSOR_PREVIOUS_SECRETS: `${'A'.repeat(43)},nope` }), ['CURSOR_PREVIOUS_SECRETS']);
  });

  test.concurrent.each([
    ['CURSOR_TTL_SECONDS', 'soon'],
    ['UPSTREAM_TIMEOUT_MS', '-5'],
    ['BACKEND_URL', 'not a url'],
  ])('a bad %s (%s) names it', async (name, value) => {
    await expectStartupFailure(env({ [name]: value }), [name]);
  });

  test.concurrent('an ADMIN_TOKEN a compose tool left unexpanded (${ADMIN_TOKEN:-}) names ADMIN_TOKEN and does not print it', async () => {
    const line = await expectStartupFailure(env({ ADMIN_TOKEN: 'x${ADMIN_TOKEN:-}0123456789', KEY_STORE: 'redis', REDIS_URL: 'redis://127.0.0.1:9' }), ['ADMIN_TOKEN', '${']);
    expect(line).not.toContain('0123456789');
  });
});
