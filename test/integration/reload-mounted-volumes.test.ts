/**
 * Items 10 and 11 of the fourth security round (gateway/config/reloader.ts):
 * - a Kubernetes Secret or ConfigMap volume is updated by swapping its `..data` symlink (the file
 *   names are symlinks through it and see no event of their own): the operator tokens file, the
 *   keys file and the gateway YAML mounted so are each reloaded, a removed token refused within a
 *   bound, with no SIGHUP;
 * - a keys file written in place in two parts, with a pause between, is never applied half-written:
 *   no key of the second half is refused while it is written.
 */
import fs from 'node:fs';
import path from 'node:path';
import { stringify } from 'yaml';
import { adminCall, readyAdminUrl } from '../kit/admin-api';
import { startRedisStack, type RedisStack } from '../kit/redis-stack';
import {
  budget, DEFAULT_TIERS, eventually, keysFileText, makeTempDir, randomKeyValue, removeTempDirs, send, sha256Hex, sleep, startGateway, type KeySpec, type Proc,
} from '../kit/gateway-stack';

afterAll(() => removeTempDirs());

const key = (id: string): KeySpec => ({ id, value: randomKeyValue(id), tier: 'standard', countries: ['GB'], address: '127.0.0.1', status: 'active' });
const tokensYaml = (tokens: Record<string, string>): string =>
  stringify(Object.entries(tokens).map(([name, token]) => ({ name, token_sha256: sha256Hex(token), role: 'viewer' })));

/**
 * A volume laid out as the kubelet lays out a Secret or ConfigMap: the files live in a timestamped
 * data directory, `..data` links to it, and each file name links through `..data`. `update` writes
 * a new data directory, renames a new `..data` link over the old one (one atomic step) and removes
 * the old directory, as the kubelet does.
 */
function mountedVolume(files: Record<string, string>): { dir: string; path: (name: string) => string; update: (files: Record<string, string>) => void } {
  const dir = makeTempDir();
  let generation = 0;
  let current = '';
  const writeData = (content: Record<string, string>): string => {
    const data = `..2026_11_29_04_00_00.${String(++generation).padStart(9, '0')}`;
    fs.mkdirSync(path.join(dir, data));
    for (const [name, text] of Object.entries(content)) fs.writeFileSync(path.join(dir, data, name), text);
    return data;
  };
  current = writeData(files);
  fs.symlinkSync(current, path.join(dir, '..data'));
  for (const name of Object.keys(files)) fs.symlinkSync(path.join('..data', name), path.join(dir, name));
  return {
    dir,
    path: (name) => path.join(dir, name),
    update(next) {
      const data = writeData(next);
      fs.symlinkSync(data, path.join(dir, '..data_tmp'));
      fs.renameSync(path.join(dir, '..data_tmp'), path.join(dir, '..data'));
      fs.rmSync(path.join(dir, current), { recursive: true });
      current = data;
    },
  };
}

describe('files mounted from a Kubernetes volume', () => {
  const TOKENS = { vera: 'viewer-token-for-reload-tests-0123456789', otto: 'other-token-for-reload-tests-0123456789' };
  const KEEP = key('keep');
  const DROP = key('drop');
  const LIMITED = key('limited');
  let tokens: ReturnType<typeof mountedVolume>;
  let secret: ReturnType<typeof mountedVolume>;
  let configMap: ReturnType<typeof mountedVolume>;
  let stack: RedisStack;
  let gateway: Proc;
  let adminUrl: string;
  beforeAll(async () => {
    tokens = mountedVolume({ 'tokens.yaml': tokensYaml(TOKENS) });
    secret = mountedVolume({ 'keys.yaml': keysFileText([KEEP, DROP, LIMITED]) });
    configMap = mountedVolume({ 'gateway.yaml': stringify({ tiers: DEFAULT_TIERS }) });
    // The admin API (operator tokens) runs against the Redis key store; the keys file is its own gateway's store.
    stack = await startRedisStack({ gateways: [{ ADMIN_PORT: '0', ADMIN_TOKENS_FILE: tokens.path('tokens.yaml') }] });
    adminUrl = await readyAdminUrl(stack.gateway, TOKENS.vera);
    gateway = await startGateway({ backendUrl: 'http://127.0.0.1:9', keysFile: secret.path('keys.yaml'), gatewayConfig: configMap.path('gateway.yaml') });
  }, budget(60_000));
  afterAll(async () => {
    await gateway?.stop();
    await stack?.stop();
  });

  /** How long a swap may take to apply: the settle interval and a poll, on an idle machine. */
  const BOUND = { timeoutMs: 5_000, intervalMs: 50 };

  test('a removed operator token is refused after the ..data swap, without a SIGHUP', async () => {
    expect((await adminCall(adminUrl, TOKENS.otto, 'GET', '/admin/keys?limit=1')).status).toBe(200);
    const started = Date.now();
    tokens.update({ 'tokens.yaml': tokensYaml({ vera: TOKENS.vera }) });
    await eventually('the removed token refused', async () => (await adminCall(adminUrl, TOKENS.otto, 'GET', '/admin/keys?limit=1')).status === 401, BOUND);
    process.stdout.write(`item 10: removed operator token refused ${Date.now() - started} ms after the ..data swap\n`);
    expect((await adminCall(adminUrl, TOKENS.vera, 'GET', '/admin/keys?limit=1')).status).toBe(200);
  });

  test('a removed key is refused after the keys volume swap; the gateway YAML swap applies too', async () => {
    expect((await send(gateway.url, '/v1/ping', { headers: { 'x-api-key': DROP.value } })).status).not.toBe(401);
    const started = Date.now();
    secret.update({ 'keys.yaml': keysFileText([KEEP, LIMITED]) });
    await eventually('the removed key refused', async () => (await send(gateway.url, '/v1/ping', { headers: { 'x-api-key': DROP.value } })).status === 401, BOUND);
    process.stdout.write(`item 10: removed key refused ${Date.now() - started} ms after the ..data swap\n`);
    expect((await send(gateway.url, '/v1/ping', { headers: { 'x-api-key': KEEP.value } })).status).not.toBe(401);
    // The gateway YAML: a tier limit of 1 a minute shows as 429 once it applies.
    configMap.update({ 'gateway.yaml': stringify({ tiers: { ...DEFAULT_TIERS, standard: { ...DEFAULT_TIERS.standard, per_minute: 1 } } }) });
    await eventually('the new tier limit applied', async () => (await send(gateway.url, '/v1/ping', { headers: { 'x-api-key': LIMITED.value } })).status === 429, BOUND);
  });
});

describe('a keys file written in place in two parts', () => {
  const KEYS = Array.from({ length: 2000 }, (_v, i) => key(`k${i}`));
  const SECOND_HALF = KEYS.slice(1000);
  let file: string;
  let gateway: Proc;
  beforeAll(async () => {
    const dir = makeTempDir();
    file = path.join(dir, 'keys.yaml');
    fs.writeFileSync(file, keysFileText(KEYS));
    const config = path.join(dir, 'gateway.yaml');
    fs.writeFileSync(config, stringify({ tiers: DEFAULT_TIERS }));
    gateway = await startGateway({ backendUrl: 'http://127.0.0.1:9', keysFile: file, gatewayConfig: config });
  }, budget(60_000));
  afterAll(async () => {
    await gateway?.stop();
  });

  test('no key of the second half is refused while the file is written, with a pause between the parts', async () => {
    const added = key('added');
    const text = keysFileText([...KEYS, added]);
    const cut = text.indexOf(`\n  - id: ${SECOND_HALF[0]!.id}\n`) + 1;
    const probe = SECOND_HALF[SECOND_HALF.length - 1]!;
    const statuses: number[] = [];
    let writing = true;
    const polling = (async () => {
      while (writing) statuses.push((await send(gateway.url, '/v1/ping', { headers: { 'x-api-key': probe.value } })).status);
    })();
    // In place: truncate, the first part (a cut at an entry boundary is valid YAML), a pause, the rest.
    const fd = fs.openSync(file, 'w');
    fs.writeSync(fd, text.slice(0, cut));
    await sleep(400);
    fs.writeSync(fd, text.slice(cut));
    fs.closeSync(fd);
    await eventually('the added key accepted', async () => (await send(gateway.url, '/v1/ping', { headers: { 'x-api-key': added.value } })).status !== 401, { timeoutMs: 5_000 });
    const polled = statuses.length;
    await eventually('a few more requests after the write', () => statuses.length >= polled + 3);
    writing = false;
    await polling;
    const refused = statuses.filter((s) => s === 401).length;
    process.stdout.write(`item 11: ${statuses.length} requests with a second-half key during the write, ${refused} refused 401\n`);
    expect(statuses.length).toBeGreaterThan(0);
    expect(refused).toBe(0);
  });
});
