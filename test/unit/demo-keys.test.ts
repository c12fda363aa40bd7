import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { ConfigError } from '../../gateway/config/config-error';
import { refuseDemoKeys } from '../../gateway/keys/key-backup';
import { DEMO_KEY_HASHES, isDemoKey, isLoopbackHost } from '../../gateway/keys/demo-keys';
import { readKeysFile } from '../../gateway/keys/keys-file';

const ROOT = path.resolve(__dirname, '../..');
const sha256 = (v: string): string => createHash('sha256').update(v).digest('hex');

/** The demo keys as the README's table gives them: value and id. */
function readmeDemoKeys(): Array<{ value: string; id: string }> {
  const readme = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('### Demo keys'), readme.indexOf('```sh', readme.indexOf('### Demo keys')));
  return [...section.matchAll(/^\| `([^`]+)` \| ([\w-]+) \|/gm)].map((m) => ({ value: m[1]!, id: m[2]! }));
}

describe('demo keys', () => {
  test('the recognised hashes are exactly those of the values the README publishes', () => {
    const published = readmeDemoKeys();
    expect(published).toHaveLength(5);
    expect(new Map(published.map((k) => [sha256(k.value), k.id]))).toEqual(DEMO_KEY_HASHES);
  });

  test('config/demo-keys.yaml holds them; config/keys.yaml (the default KEYS_FILE) holds none', () => {
    const demo = readKeysFile(path.join(ROOT, 'config/demo-keys.yaml'));
    expect(new Map(demo.map((e) => [e.key_sha256, e.id]))).toEqual(DEMO_KEY_HASHES);
    expect(readKeysFile(path.join(ROOT, 'config/keys.yaml')).filter((e) => isDemoKey(e.key_sha256))).toEqual([]);
  });

  test('import refuses a file holding one, naming it (also under another id), in one line', () => {
    const entries = readKeysFile(path.join(ROOT, 'config/demo-keys.yaml'));
    expect(() => refuseDemoKeys('f.yaml', entries)).toThrow(ConfigError);
    const renamed = [{ ...entries[0]!, id: 'acme-prod' }];
    let message = '';
    try {
      refuseDemoKeys('f.yaml', renamed);
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toBe('f.yaml: holds demo keys, whose values are published in the README: acme-prod (the demo key demo-standard); nothing imported (remove them, or pass --allow-demo to import them anyway)');
    expect(() => refuseDemoKeys('f.yaml', [{ ...entries[0]!, key_sha256: sha256('a real key') }])).not.toThrow();
  });

  test.each([
    ['127.0.0.1', true], ['127.1.2.3', true], ['::1', true], ['[::1]', true], ['localhost', true], ['::ffff:127.0.0.1', true],
    ['0.0.0.0', false], ['::', false], ['10.0.0.5', false], ['192.168.1.2', false], ['gateway.example', false],
  ])('%s is loopback: %s', (host, loopback) => {
    expect(isLoopbackHost(host)).toBe(loopback);
  });
});
