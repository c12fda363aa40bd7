/** The portal's configuration at start-up: a problem stops the gateway with one line naming the variable. */
import { gatewayEnv, refusedPort, runToExit, writeGatewayConfig, writeKeysFile } from '../kit/gateway-stack';

const env = (extra: Record<string, string>) => gatewayEnv(writeKeysFile([]), writeGatewayConfig(), extra);

test.each([
  [{ PORTAL_PORT: '0' }, /^config error: environment variable PORTAL_PUBLIC_URL: required when PORTAL_PORT is set/],
  [{ PORTAL_PORT: '0', PORTAL_PUBLIC_URL: 'ftp://portal.example.com' }, /^config error: environment variable PORTAL_PUBLIC_URL: /],
  [{ PORTAL_PORT: '0', PORTAL_PUBLIC_URL: 'https://p.example', PORTAL_OIDC_ISSUER: 'https://id.example' }, /^config error: environment variable PORTAL_OIDC_CLIENT_ID: required/],
])('%j stops start-up with one line', async (extra, line) => {
  const run = await runToExit('gateway/main.js', env(extra));
  expect(run.code).toBe(1);
  expect(run.stderr.trim().split('\n')).toHaveLength(1);
  expect(run.stderr.trim()).toMatch(line);
});

test('an identity provider that cannot be reached stops start-up with one line naming PORTAL_OIDC_ISSUER, never the secret', async () => {
  const port = await refusedPort();
  const run = await runToExit('gateway/main.js', env({
    PORTAL_PORT: '0', PORTAL_PUBLIC_URL: 'http://127.0.0.1:1', PORTAL_OIDC_ISSUER: `http://127.0.0.1:${port}`,
    PORTAL_OIDC_CLIENT_ID: 'portal', PORTAL_OIDC_CLIENT_SECRET: 'never-printed-secret-value', PORTAL_OIDC_ALLOW_HTTP: '1',
  }));
  expect(run.code).toBe(1);
  const lines = run.stderr.trim().split('\n');
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatch(/^config error: environment variable PORTAL_OIDC_ISSUER: /);
  expect(run.stderr + run.stdout).not.toContain('never-printed-secret-value');
});
