/**
 * What a report must be, on a real gateway over redis-server with GitHub's key list served by a
 * local server: no signature, another key's signature, a body changed after signing, 2 MiB, 10,000
 * tokens, invalid JSON under a valid signature: 400, nothing changed, never a 500; an unknown key
 * identifier makes the list be fetched again once (at most once a minute), then 400. The key list
 * out of reach: the report is refused with 503 (GitHub sends it again) and /v1 keeps serving. With
 * the keys file as the key store (never written by the gateway) a report is answered and logged.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { gatewayEnv, getWithKey, makeTempDir, plkKeyValue, removeTempDirs, runToExit, sleep, startStack, withBadChecksum, writeGatewayConfig, writeKeysFile, type Stack } from '../kit/gateway-stack';
import { makeSigner, match, postReport, sendRaw, signatureOf } from '../kit/github-reports';
import { ROOT } from '../kit/processes';
import { freePort } from '../kit/redis-server';
import { startLeaksStack, type LeaksStack } from '../kit/leaks-stack';
import { announcedUrl } from '../kit/log-lines';
import { eventually } from '../kit/timing';
import { redisKeys } from '../../gateway/keys/redis-layout';

jest.setTimeout(180_000);

let s: LeaksStack;
let value: string;
beforeAll(async () => {
  s = await startLeaksStack();
  value = await s.operator.key('target', undefined);
}, 90_000);
afterAll(async () => {
  await s?.stop();
  removeTempDirs();
});

const hook = () => s.hookUrls[0]!;
/** What a refused report must leave as it was: the record, the audit log, the events, the value working. */
async function unchangedBy(send: () => Promise<{ status: number; body: { error?: string } }>): Promise<number> {
  const record = await s.stack.redis.get(redisKeys.record('target'));
  const audit = await s.stack.redis.xlen(redisKeys.audit);
  const answer = await send();
  expect(await s.stack.redis.get(redisKeys.record('target'))).toBe(record);
  expect(await s.stack.redis.xlen(redisKeys.audit)).toBe(audit);
  expect((await getWithKey(s.publicUrls[0]!, '/v1/ping', value)).status).toBe(200);
  return answer.status;
}
const signedRaw = (raw: Buffer) => sendRaw(hook(), raw, { 'github-public-key-identifier': s.github.identifier, 'github-public-key-signature': signatureOf(raw, s.github) });

test.each([
  ['no signature', () => postReport(hook(), [match(value)])],
  ['a signature by another key', () => {
    const raw = Buffer.from(JSON.stringify([match(value)]));
    return sendRaw(hook(), raw, { 'github-public-key-identifier': s.github.identifier, 'github-public-key-signature': signatureOf(raw, makeSigner('other')) });
  }],
  ['a body changed after signing', () => {
    const raw = Buffer.from(JSON.stringify([match(value)]));
    const changed = Buffer.from(JSON.stringify([match(value, 'https://github.com/someone/else')]));
    return sendRaw(hook(), changed, { 'github-public-key-identifier': s.github.identifier, 'github-public-key-signature': signatureOf(raw, s.github) });
  }],
  ['a body of 2 MiB', () => signedRaw(Buffer.from(JSON.stringify([match(value), { token: 'x'.repeat(2 * 1024 * 1024), type: 't' }])))],
  ['10,000 tokens in one report', () => signedRaw(Buffer.from(JSON.stringify([match(value), ...Array.from({ length: 9999 }, (_, i) => ({ token: `t${i}`, type: 't' }))])))],
  ['invalid JSON under a valid signature', () => signedRaw(Buffer.from(`[${JSON.stringify(match(value))}`))],
  ['a JSON value that is not a report', () => signedRaw(Buffer.from(JSON.stringify({ token: value, type: 't' })))],
])('%s: 400, nothing changed', async (_what, send) => {
  let answer: Awaited<ReturnType<typeof send>> | undefined;
  expect(await unchangedBy(async () => (answer = await send()))).toBe(400);
  expect(answer!.body.error).toBe('invalid_parameter');
});

test('a valid report of the same value is still taken afterwards (the refusals changed nothing)', async () => {
  const other = await s.operator.key('other', undefined);
  expect((await postReport(hook(), [match(other)], s.github)).body[0].label).toBe('true_positive');
});

test('the key list out of reach: 503 (GitHub sends the report again), /v1 keeps serving', async () => {
  const closed = await freePort();
  const g = await s.stack.startGateway({ HOOKS_PORT: '0', LEAKS_GITHUB_KEYS_URL: `http://127.0.0.1:${closed}/keys` });
  const hooks = await announcedUrl(g, 'hooks listening');
  const target = await s.operator.key('unreached', undefined);
  const answer = await postReport(hooks, [match(target)], s.github);
  expect(answer.status).toBe(503);
  expect(answer.body.error).toBe('service_unavailable');
  expect(answer.headers['retry-after']).toBe('60');
  expect((await getWithKey(g.url, '/v1/ping', target)).status).toBe(200);
  expect((await getWithKey(g.url, '/v1/properties?country=GB&listing_type=sale&limit=1', target)).status).toBe(200);
  // Lines arrive through a pipe, a little after the answer.
  await eventually('the key list\'s warning', () => g.output.some((l) => l.includes('GitHub\'s secret scanning keys could not be read')));
});

test('an unknown key identifier: the list fetched again once (at most once a minute), then 400', async () => {
  const keyList = s.keyList!;
  // The list was fetched by the first report; a fetch again waits for the minute from that attempt.
  await sleep(Math.max(0, keyList.lastFetchAt + 60_500 - Date.now()));
  const fetches = keyList.fetches;
  const stranger = makeSigner('not-published');
  expect(await unchangedBy(() => postReport(hook(), [match(value)], stranger))).toBe(400);
  expect(keyList.fetches).toBe(fetches + 1);
  // Within the minute of that attempt: not fetched again, whatever the identifier.
  const added = makeSigner('published-later');
  keyList.signers = [s.github, added];
  expect(await unchangedBy(() => postReport(hook(), [match(value)], stranger))).toBe(400);
  expect(await unchangedBy(() => postReport(hook(), [match(value)], added))).toBe(400);
  expect(keyList.fetches).toBe(fetches + 1);
});

test.each([
  [{ LEAKS_GITHUB_KEYS_URL: 'ftp://keys.example/list' }, /^config error: environment variable LEAKS_GITHUB_KEYS_URL: must be an http:\/\/ or https:\/\/ URL$/],
  [{ LEAKS_GITHUB_KEYS_URL: 'https://keys.example/list', LEAKS_GITHUB_KEYS_FILE: '/etc/github-keys.json' }, /^config error: environment variable LEAKS_GITHUB_KEYS_FILE: set together with LEAKS_GITHUB_KEYS_URL/],
])('%j stops start-up with one line', async (extra, line) => {
  const run = await runToExit('gateway/main.js', gatewayEnv(writeKeysFile([]), writeGatewayConfig(), { HOOKS_PORT: '0', ...extra }));
  expect(run.code).toBe(1);
  expect(run.stderr.trim().split('\n')).toHaveLength(1);
  expect(run.stderr.trim()).toMatch(line);
});

test('LEAKS_GITHUB=off leaves the path out (404); GET on it is 405 while it is on', async () => {
  const off = await s.stack.startGateway({ HOOKS_PORT: '0', LEAKS_GITHUB: 'off', STRIPE_WEBHOOK_SECRET: 'whsec_test_secret_for_the_listener' });
  const hooks = await announcedUrl(off, 'hooks listening');
  const answer = await postReport(hooks, [match(value)], s.github);
  expect(answer.status).toBe(404);
  expect(answer.body.error).toBe('not_found');
  expect((await fetch(`${hook()}/hooks/github/secret-scanning`)).status).toBe(405);
});

/** scripts/leak-report.ts, built: `keypair DIR`, or `send` with the values on standard input. */
function leakReport(args: string[], input = ''): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [path.join(ROOT, 'dist/scripts/leak-report.js'), ...args], { cwd: ROOT });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(input);
  });
}

describe('with the keys file as the key store, and the script that signs a report locally', () => {
  let stack: Stack;
  const fileValue = plkKeyValue();
  afterAll(() => stack?.stop());

  test('the script\'s report is answered from the file and logged for the operator; the file is not changed', async () => {
    const dir = makeTempDir();
    const made = await leakReport(['keypair', dir]);
    expect(made.code).toBe(0);
    const keyList = path.join(dir, 'github-keys.json');
    expect(fs.statSync(path.join(dir, 'github-signing-key.pem')).mode & 0o777).toBe(0o600);
    stack = await startStack({
      keys: [{ id: 'from-file', value: fileValue, tier: 'standard', countries: ['GB'], address: '127.0.0.1', status: 'active' }],
      gateways: [{ HOOKS_PORT: '0', LEAKS_GITHUB_KEYS_FILE: keyList }],
    });
    const hooks = await announcedUrl(stack.gateway, 'hooks listening');
    const digest = createHash('sha256').update(fs.readFileSync(stack.keysFile)).digest('hex');
    const sent = await leakReport(['send', '--to', `${hooks}/hooks/github/secret-scanning`, '--key', path.join(dir, 'github-signing-key.pem')], `${fileValue}\n${withBadChecksum(fileValue)}\n`);
    expect(sent.code).toBe(0);
    const [status, body] = sent.stdout.split('\n');
    expect(status).toBe('200');
    expect((JSON.parse(body!) as Array<{ label: string }>).map((f) => f.label)).toEqual(['true_positive', 'false_positive']);
    await eventually('the operator\'s line', () => stack.gateway.output.some((l) => l.includes('"key_id":"from-file"') && l.includes('reported leaked')));
    expect(createHash('sha256').update(fs.readFileSync(stack.keysFile)).digest('hex')).toBe(digest);
    expect((await getWithKey(stack.url, '/v1/ping', fileValue)).status).toBe(200);
    expect(stack.gateway.output.join('\n')).not.toContain(fileValue);
    // Signed by another pair: refused.
    const other = makeTempDir();
    await leakReport(['keypair', other]);
    const refused = await leakReport(['send', '--to', `${hooks}/hooks/github/secret-scanning`, '--key', path.join(other, 'github-signing-key.pem')], `${fileValue}\n`);
    expect(refused.code).toBe(1);
    expect(refused.stdout.split('\n')[0]).toBe('400');
  });
});
