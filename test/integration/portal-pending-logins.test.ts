/**
 * Item 9 of the fourth security round: `GET /portal/login` stores a pending OpenID sign-in for 10
 * minutes before the caller has proved anything. Starting sign-ins is budgeted
 * (gateway/portal/login-start-budget.ts): 20 a minute per address, 6,000 a minute for everyone, in
 * Redis across instances; over it the portal answers 429 with a page and Retry-After, and stores
 * nothing. Against a real OpenID provider (oidc-provider) and a real redis-server.
 */
import path from 'node:path';
import { awayFromMinuteEdge, makeTempDir, removeTempDirs, startGateway, writeKeysFile, type Proc } from '../kit/gateway-stack';
import { announcedUrl } from '../kit/log-lines';
import { portalEnv, portalRequest, writePortalConfig } from '../kit/portal';
import { ROOT, startNodeScript, type RunningProcess } from '../kit/processes';
import { startRedis, type RedisServer } from '../kit/redis-server';
import Redis from 'ioredis';

jest.setTimeout(90_000);

const CLIENT = { client_id: 'listings-portal', client_secret: 'portal-test-client-secret-0123456789' };
let redisServer: RedisServer;
let provider: RunningProcess;
let gateway: Proc;
let portalUrl: string;

beforeAll(async () => {
  redisServer = await startRedis();
  const dir = makeTempDir();
  const configFile = path.join(dir, 'gateway.yaml');
  writePortalConfig(configFile);
  const env = await portalEnv();
  portalUrl = env.PORTAL_PUBLIC_URL;
  provider = await startNodeScript(path.join(ROOT, 'test', 'kit', 'oidc-provider.mjs'), {
    OIDC_CLIENT: JSON.stringify({ ...CLIENT, redirect_uri: `${portalUrl}/portal/callback` }),
    OIDC_ACCOUNTS: JSON.stringify({}),
  });
  gateway = await startGateway({
    backendUrl: 'http://127.0.0.1:9', keysFile: writeKeysFile([]), gatewayConfig: configFile,
    env: {
      KEY_STORE: 'redis', REDIS_URL: redisServer.url, ...env,
      PORTAL_OIDC_ISSUER: provider.url, PORTAL_OIDC_CLIENT_ID: CLIENT.client_id, PORTAL_OIDC_CLIENT_SECRET: CLIENT.client_secret, PORTAL_OIDC_ALLOW_HTTP: '1',
    },
  });
  await announcedUrl(gateway, 'portal listening');
});

afterAll(async () => {
  await gateway?.stop();
  await provider?.stop();
  await redisServer?.stop();
  removeTempDirs();
});

async function pendingStored(): Promise<number> {
  const redis = new Redis(redisServer.url);
  try {
    return (await redis.keys('lgw:portal:oidc:*')).length;
  } finally {
    redis.disconnect();
  }
}

test('200 sign-in starts from one address store 20 pending sign-ins; the rest are 429 with a page; another address still starts', async () => {
  await awayFromMinuteEdge(15_000);
  const statuses: number[] = [];
  for (let i = 0; i < 200; i++) statuses.push((await portalRequest(portalUrl, '/portal/login')).status);
  const stored = await pendingStored();
  process.stdout.write(`item 9: 200 GET /portal/login from one address: ${statuses.filter((s) => s === 303).length} × 303, ${statuses.filter((s) => s === 429).length} × 429, ${stored} pending sign-ins stored in Redis\n`);
  expect(statuses).toEqual([...Array(20).fill(303), ...Array(180).fill(429)]);
  expect(stored).toBe(20);
  const over = await portalRequest(portalUrl, '/portal/login');
  expect(over.headers['retry-after']).toMatch(/^\d+$/);
  expect(over.headers['content-type']).toMatch(/^text\/html/);
  expect(over.text).toContain('Too many sign-ins started');
  expect((await portalRequest(portalUrl, '/portal/login', { localAddress: '127.0.0.2' })).status).toBe(303);
});
