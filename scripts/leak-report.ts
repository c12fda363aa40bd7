import { createPrivateKey, generateKeyPairSync, sign } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';

/**
 * Try the gateway's leaked-key listener without GitHub: a report signed as GitHub signs it, by a
 * key pair of your own.
 *
 *   node dist/scripts/leak-report.js keypair DIR
 *     writes DIR/github-signing-key.pem (private, mode 0600) and DIR/github-keys.json (the key
 *     list, in GitHub's format: point LEAKS_GITHUB_KEYS_FILE at it, or serve it as LEAKS_GITHUB_KEYS_URL)
 *
 *   node dist/scripts/leak-report.js send --to URL --key DIR/github-signing-key.pem [--found-at URL] < values
 *     reads the values to report from standard input (one a line: never on the command line,
 *     where the process list shows them), posts them to URL (the listener's
 *     /hooks/github/secret-scanning) signed with the key, and prints the status and the answer.
 */
export const KEY_IDENTIFIER = 'local-test-key';
const PRIVATE_FILE = 'github-signing-key.pem';
const LIST_FILE = 'github-keys.json';

function keypair(dir: string): void {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, PRIVATE_FILE), privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 });
  const list = { public_keys: [{ key_identifier: KEY_IDENTIFIER, key: publicKey.export({ type: 'spki', format: 'pem' }), is_current: true }] };
  writeFileSync(path.join(dir, LIST_FILE), `${JSON.stringify(list, null, 2)}\n`);
  process.stdout.write(`${path.join(dir, PRIVATE_FILE)}\n${path.join(dir, LIST_FILE)}\n`);
}

async function send(to: string, keyFile: string, foundAt: string): Promise<number> {
  const values = readFileSync(0, 'utf8').split('\n').map((l) => l.trim()).filter(Boolean);
  const report = values.map((token) => ({ token, type: 'listings_gateway_api_key', url: foundAt, source: 'content' }));
  const body = Buffer.from(JSON.stringify(report));
  const signature = sign('sha256', body, { key: createPrivateKey(readFileSync(keyFile)), dsaEncoding: 'der' }).toString('base64');
  const answer = await fetch(to, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'github-public-key-identifier': KEY_IDENTIFIER, 'github-public-key-signature': signature },
    body,
  });
  process.stdout.write(`${answer.status}\n${await answer.text()}\n`);
  return answer.ok ? 0 : 1;
}

async function main(): Promise<number> {
  const { positionals, values } = parseArgs({
    allowPositionals: true,
    options: { to: { type: 'string' }, key: { type: 'string' }, 'found-at': { type: 'string' } },
  });
  const [command, dir] = positionals;
  if (command === 'keypair' && dir) return keypair(dir), 0;
  if (command === 'send' && values.to && values.key) return send(values.to, values.key, values['found-at'] ?? 'https://github.com/example/repo/blob/main/config.env');
  process.stderr.write('usage: leak-report keypair DIR | leak-report send --to URL --key PRIVATE.pem [--found-at URL] < values\n');
  return 2;
}

if (require.main === module) {
  main().then((code) => process.exit(code), (err: Error) => {
    process.stderr.write(`leak-report: ${err.message}\n`);
    process.exit(1);
  });
}
