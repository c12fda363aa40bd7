/**
 * The providers' listener (HOOKS_PORT): only the providers' paths, its own access lines, and a
 * configuration that turns no provider on stops start-up with one line.
 */
import { announcedUrl, waitForLine } from '../kit/log-lines';
import { gatewayEnv, runToExit, startStack, writeGatewayConfig, writeKeysFile, type Stack } from '../kit/gateway-stack';

const env = (extra: Record<string, string>) => gatewayEnv(writeKeysFile([]), writeGatewayConfig(), extra);

test.each([
  [{ HOOKS_PORT: '0', LEAKS_GITHUB: 'off' }, /^config error: environment variable HOOKS_PORT: set, but no provider is on/],
  [{ HOOKS_PORT: '0', LEAKS_GITHUB: 'maybe' }, /^config error: environment variable LEAKS_GITHUB: /],
  [{ HOOKS_PORT: '0', STRIPE_WEBHOOK_SECRET: 'not-a-secret-value' }, /^config error: environment variable STRIPE_WEBHOOK_SECRET: must be one or more endpoint secrets/],
  [{ STRIPE_WEBHOOK_SECRET: 'whsec_only_without_a_listener' }, /^config error: environment variable STRIPE_WEBHOOK_SECRET: needs HOOKS_PORT/],
  [{ HOOKS_PORT: '0', STRIPE_WEBHOOK_SECRET: 'whsec_with_the_keys_file_store' }, /^config error: environment variable STRIPE_WEBHOOK_SECRET: needs KEY_STORE=redis/],
])('%j stops start-up with one line, never showing a secret', async (extra, line) => {
  const run = await runToExit('gateway/main.js', env(extra));
  expect(run.code).toBe(1);
  expect(run.stderr.trim().split('\n')).toHaveLength(1);
  expect(run.stderr.trim()).toMatch(line);
  expect(run.stderr + run.stdout).not.toContain('not-a-secret-value');
});

describe('the providers\' listener', () => {
  let stack: Stack;
  let hooks: string;
  beforeAll(async () => {
    stack = await startStack({ keys: [], gateways: [{ HOOKS_PORT: '0' }] });
    hooks = await announcedUrl(stack.gateway, 'hooks listening');
  });
  afterAll(() => stack.stop());

  test('answers every path that is not a provider\'s with a catalogued JSON 404 and writes its own access line', async () => {
    for (const [method, path] of [['GET', '/'], ['POST', '/v1/ping'], ['POST', '/admin/keys'], ['POST', '/hooks/stripe'], ['GET', '/hooks/nothing?x=1']] as const) {
      const res = await fetch(`${hooks}${path}`, { method, ...(method === 'POST' ? { body: '{}' } : {}) });
      expect(res.status).toBe(404);
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      expect(await res.json()).toEqual({ error: 'not_found', message: expect.any(String) });
      const id = res.headers.get('x-request-id')!;
      const line = await waitForLine(stack.gateway, id);
      expect(JSON.parse(line)).toMatchObject({ listener: 'hooks', msg: 'hook answered', req: { method, url: path.split('?')[0] }, res: { statusCode: 404 } });
    }
  });

  test('the public port does not answer the providers\' paths', async () => {
    const res = await fetch(`${stack.url}/hooks/stripe`, { method: 'POST', body: '{}' });
    expect(res.status).not.toBe(200);
  });
});
