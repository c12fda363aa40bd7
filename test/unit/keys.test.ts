import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { normaliseAddress } from '../../gateway/keys/address';
import { generateKeyValue, isPlausibleKeyValue, KEY_PREFIX, sha256Hex } from '../../gateway/keys/key-format';
import { loadKeysFile } from '../../gateway/keys/keys-file';
import { createFileKeyStore } from '../../gateway/keys/file-key-store';
import { ConfigError } from '../../gateway/config/config-error';

const config = { tiers: { standard: { perMinute: 60, perDay: 1000, perMonth: 10000 }, advanced: { perMinute: 600, perDay: 10000, perMonth: 100000 } }, stores: { byCountry: {} } };

describe('address normalisation', () => {
  it.each([
    ['127.0.0.1', '127.0.0.1'],
    ['::ffff:127.0.0.1', '127.0.0.1'],
    ['::FFFF:7f00:1', '127.0.0.1'],
    ['::1', '::1'],
    ['2001:DB8:0:0:0:0:0:1', '2001:db8::1'],
    ['fe80::1%eth0', 'fe80::1'],
  ])('%s → %s', (input, expected) => expect(normaliseAddress(input)).toBe(expected));
  it.each(['', 'localhost', '127.1', '0x7f.0.0.1', '256.0.0.1', '1.2.3.4/32', '::g'])('refuses %j', (input) =>
    expect(normaliseAddress(input)).toBeUndefined());
});

describe('key format', () => {
  it('generates prefixed, checksummed, distinct keys', () => {
    const a = generateKeyValue();
    const b = generateKeyValue();
    expect(a).toMatch(/^plk_[0-9A-Za-z]{49}$/);
    expect(a).not.toBe(b);
    expect(isPlausibleKeyValue(a)).toBe(true);
  });
  it('refuses a prefixed value with a wrong checksum or shape, accepts any other format', () => {
    const a = generateKeyValue();
    const flipped = a.slice(0, 10) + (a[10] === 'x' ? 'y' : 'x') + a.slice(11);
    expect(isPlausibleKeyValue(flipped)).toBe(false);
    expect(isPlausibleKeyValue(`${a}x`)).toBe(false);
    expect(isPlausibleKeyValue(`${KEY_PREFIX}short`)).toBe(false);
    expect(isPlausibleKeyValue('legacy-key-123')).toBe(true);
  });
  it('hashes as SHA-256 hex', () => {
    expect(sha256Hex('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  });
});

describe('keys file', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'keys-test-'));
  const write = (name: string, text: string): string => {
    const file = path.join(dir, name);
    writeFileSync(file, text);
    return file;
  };
  const entry = (over: Record<string, string> = {}): string => {
    const e = { id: 'k1', key_sha256: sha256Hex('v1'), tier: 'standard', countries: '[gb, FR]', address: '127.0.0.1', status: 'active', ...over };
    return `  - ${Object.entries(e).map(([k, v]) => `${k}: ${v}`).join('\n    ')}\n`;
  };

  it('loads records with tier defaults and overrides, normalised', () => {
    const file = write('ok.yaml', `keys:\n${entry()}${entry({ id: 'k2', key_sha256: sha256Hex('v2'), address: '::ffff:10.0.0.1', status: 'paused', pause_reason: 'payment_dispute', limits: '{ per_day: 5 }' })}`);
    const [k1, k2] = loadKeysFile(file, config).map((k) => k.record);
    expect([...k1!.countries]).toEqual(['GB', 'FR']);
    expect(k1!.limits).toEqual(config.tiers.standard);
    expect(k2!.address).toBe('10.0.0.1');
    expect(k2!.limits).toEqual({ perMinute: 60, perDay: 5, perMonth: 10000 });
    const store = createFileKeyStore([{ record: k1! }, { record: k2! }]);
    expect(store.lookup(sha256Hex('v2'))).toMatchObject({ kind: 'found', record: { id: 'k2' } });
    expect(store.lookup(sha256Hex('nope'))).toEqual({ kind: 'not_found' });
  });

  const failure = (text: string): string => {
    const file = write(`bad-${Math.random()}.yaml`, text);
    try {
      loadKeysFile(file, config);
    } catch (err) {
      expect(err).toBeInstanceOf(ConfigError);
      const message = (err as Error).message;
      expect(message).not.toContain('\n');
      expect(message.startsWith(file)).toBe(true);
      return message;
    }
    throw new Error('expected a ConfigError');
  };

  it.each([
    [{ address: 'not-an-ip' }, 'keys[1] (id k1): field "address"'],
    [{ tier: 'gold' }, 'field "tier"'],
    [{ countries: '[GB, XX]' }, 'field "countries[1]"'],
    [{ key_sha256: 'abc' }, 'field "key_sha256"'],
    [{ status: 'paused' }, 'field "pause_reason"'],
    [{ limits: '{ per_day: 0 }' }, 'field "limits.per_day"'],
    [{ extra: '1' }, 'keys[1] (id k1)'],
  ])('names the entry and field for %j', (over, expected) => {
    expect(failure(`keys:\n${entry({ id: 'k0', key_sha256: sha256Hex('v0') })}${entry(over as Record<string, string>)}`)).toContain(expected);
  });

  it('refuses duplicate ids and hashes, bad YAML and a missing file', () => {
    expect(failure(`keys:\n${entry()}${entry({ key_sha256: sha256Hex('other') })}`)).toContain('duplicate id');
    expect(failure(`keys:\n${entry()}${entry({ id: 'k2' })}`)).toContain('field "key_sha256"');
    expect(failure('keys: [\n')).toContain('not valid YAML');
    expect(() => loadKeysFile(path.join(dir, 'missing.yaml'), config)).toThrow(/missing\.yaml: cannot be read/);
  });
});
