/**
 * `npm start` (scripts/start-all.ts): the data service and the gateway with the embedded defaults
 * (config/demo-keys.yaml, config/gateway.yaml, generated listings), and the demo keys exactly as the
 * README's table lists them. Nothing else starts the shipped keys file, so this is what keeps the
 * README's front door true.
 */
import fs from 'node:fs';
import path from 'node:path';
import { expectError, expectKeyedSuccess, getWithKey } from '../kit/gateway-stack';
import { waitForLine } from '../kit/log-lines';
import { ROOT, startProcess, type RunningProcess } from '../kit/processes';
import { freePort } from '../kit/redis-server';

/** The demo keys as the README's table gives them: value, id, state column. */
function readmeDemoKeys(): Array<{ value: string; id: string; state: string }> {
  const readme = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('### Demo keys'), readme.indexOf('```sh', readme.indexOf('### Demo keys')));
  return [...section.matchAll(/^\| `([^`]+)` \| ([\w-]+) \|[^|]*\|[^|]*\| ([^|]+) \|$/gm)].map((m) => ({ value: m[1]!, id: m[2]!, state: m[3]!.trim() }));
}

let all: RunningProcess;
let gatewayUrl: string;

beforeAll(async () => {
  // Resolves on the data service's "listening" line; the gateway's follows once it has started.
  all = await startProcess('scripts/start-all.js', { BACKEND_PORT: String(await freePort()), PORT: '0', OPS_PORT: '0', PORTAL_PORT: String(await freePort()) }, 60_000);
  const line = await waitForLine(all, '"key_store"', 30_000);
  gatewayUrl = `http://127.0.0.1:${(JSON.parse(line) as { port: number }).port}`;
}, 90_000);

afterAll(async () => {
  expect(await all.stop()).toBe(0);
});

test('the README lists five demo keys', () => {
  expect(readmeDemoKeys().map((k) => k.id)).toEqual(['demo-standard', 'demo-advanced', 'demo-paused', 'demo-revoked', 'demo-elsewhere']);
});

test('each README demo key answers as its state column says', async () => {
  for (const { value, id, state } of readmeDemoKeys()) {
    const ping = await getWithKey(gatewayUrl, '/v1/ping', value);
    if (state === 'active') {
      expectKeyedSuccess(ping);
      expect(ping.body).toMatchObject({ key_id: id });
    } else if (state.startsWith('paused')) expectError(ping, 'key_paused');
    else if (state === 'revoked') expectError(ping, 'unauthenticated');
    else if (state.startsWith('active, registered for')) expectError(ping, 'ip_not_allowed', { ip: '127.0.0.1' });
    else throw new Error(`unexpected state "${state}" for ${id}`);
  }
});

test('a page of generated listings, through the gateway, for the Standard demo key', async () => {
  const page = await getWithKey(gatewayUrl, '/v1/properties?country=GB&limit=5', 'demo-standard-7Qx2mR9vK4');
  expectKeyedSuccess(page);
  expect(page.body.data).toHaveLength(5);
  expect(typeof page.body.next_cursor).toBe('string');
});
