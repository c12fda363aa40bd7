/**
 * The key holders' portal on two gateway instances over one Redis key store (docs/portal.md): a
 * session and a one-time link work across instances; a holder's new address, country and upgrade
 * are served by both instances within a second; the policy is hot-reloaded.
 */
import path from 'node:path';
import { fixtureListings } from '../fixtures/listings';
import { cursorSecret, getWithKey, makeTempDir, removeTempDirs, startBackend, startGateway, writeKeysFile, writeListingsFile, type Proc } from '../kit/gateway-stack';
import { holderFromLink, operatorOf, portalEnv, portalRequest, postAs, signInWithLink, until, writePortalConfig, type Holder } from '../kit/portal';
import { runKeysCli } from '../kit/keys-cli';
import { startRedis, type RedisServer } from '../kit/redis-server';

let redisServer: RedisServer;
let backend: Proc;
const gateways: Proc[] = [];
let configFile: string;
let operator: Awaited<ReturnType<typeof operatorOf>>;
/** Both instances are behind one public address (a load balancer's): instance A's portal here. */
let publicUrl: string;
const portals: string[] = [];
let acmeValue: string;

beforeAll(async () => {
  redisServer = await startRedis();
  const dir = makeTempDir();
  configFile = path.join(dir, 'gateway.yaml');
  writePortalConfig(configFile);
  backend = await startBackend(writeListingsFile(fixtureListings(), 'json', dir));
}, 60_000);

afterAll(async () => {
  for (const g of gateways) await g.stop();
  await backend?.stop();
  operator?.close();
  await redisServer?.stop();
  removeTempDirs();
});

async function start(): Promise<void> {
  const envA = await portalEnv();
  publicUrl = envA.PORTAL_PUBLIC_URL;
  const envB = await portalEnv(publicUrl);
  const keysFile = writeKeysFile([]);
  const secret = cursorSecret();
  for (const env of [envA, envB]) {
    gateways.push(await startGateway({ backendUrl: backend.url, keysFile, gatewayConfig: configFile, cursorSecret: secret, env: { KEY_STORE: 'redis', REDIS_URL: redisServer.url, ...env } }));
    portals.push(`http://127.0.0.1:${env.PORTAL_PORT}`);
  }
  operator = await operatorOf(redisServer.url, configFile);
  await operator.accounts.create({ id: 'acme', name: 'Acme Ltd', emails: ['ops@acme.test'] });
  await operator.accounts.create({ id: 'other', name: 'Other Corp', emails: ['it@other.test'] });
  acmeValue = await operator.key('acme-1', 'acme');
  await operator.key('other-1', 'other', { note: 'OPERATOR-ONLY-NOTE' });
  await until('both portals answer', async () => (await Promise.all(portals.map((p) => portalRequest(p, '/portal/sign-in').then((a) => a.status, () => 0)))).every((s) => s === 200));
}

beforeAll(start, 60_000);

const [A, B] = [0, 1];
const link = (): Promise<string> => operator.links.issue('acme', 15);

test('a session made on one instance works on the other; signing out there ends it on both', async () => {
  const holder = await holderFromLink(portals[A]!, publicUrl, await link());
  const onB = await portalRequest(portals[B]!, '/portal/keys', { cookie: holder.cookie });
  expect(onB.status).toBe(200);
  expect(onB.text).toContain('acme-1');
  expect(onB.text).not.toContain('other-1');
  expect((await postAs(holder, portals[B]!, publicUrl, '/portal/sign-out')).status).toBe(303);
  const afterA = await portalRequest(portals[A]!, '/portal/keys', { cookie: holder.cookie });
  expect(afterA.status).toBe(303);
  expect(afterA.location).toBe('/portal/sign-in');
});

test('a one-time link signs in once across both instances', async () => {
  const token = await link();
  const first = await signInWithLink(portals[A]!, publicUrl, token);
  expect(first.status).toBe(303);
  const second = await signInWithLink(portals[B]!, publicUrl, token);
  expect(second.status).toBe(400);
  expect(second.headers['set-cookie']).toBeUndefined();
  // Opening the link only shows the button: it does not use the link (mail scanners open links).
  const token2 = await link();
  expect((await portalRequest(portals[B]!, `/portal/link/${token2}`)).status).toBe(200);
  expect((await signInWithLink(portals[B]!, publicUrl, token2)).status).toBe(303);
});

test('`keys account link ID` prints PORTAL_PUBLIC_URL/portal/link/<token>: it signs in on either instance, once', async () => {
  const cli = await runKeysCli(redisServer.url, ['account', 'link', 'acme', '--minutes', '5'], { PORTAL_PUBLIC_URL: publicUrl });
  expect(cli.code).toBe(0);
  const url = cli.stdout.trim().split('\n').pop()!;
  expect(url.startsWith(`${publicUrl}/portal/link/`)).toBe(true);
  const token = url.slice(url.lastIndexOf('/') + 1);
  expect((await signInWithLink(portals[B]!, publicUrl, token)).status).toBe(303);
  expect((await signInWithLink(portals[A]!, publicUrl, token)).status).toBe(400);
});

describe('a holder changes a key on one instance; both serve the change within a second', () => {
  let holder: Holder;
  beforeAll(async () => {
    holder = await holderFromLink(portals[A]!, publicUrl, await link());
  });

  test('a new address: a ping from it is answered 200 by both', async () => {
    const fromNew = (url: string) => getWithKey(url, '/v1/ping', acmeValue, { localAddress: '127.0.0.2' });
    expect((await fromNew(gateways[A]!.url)).status).toBe(403);
    const posted = await postAs(holder, portals[A]!, publicUrl, '/portal/keys/acme-1/addresses', { addresses: '127.0.0.1\n127.0.0.2' });
    expect(posted.status).toBe(303);
    expect(posted.location).toBe('/portal/keys/acme-1?done=addresses');
    const since = Date.now();
    await Promise.all(gateways.map((g) => until(`${g.url} answers 200 from 127.0.0.2`, async () => (await fromNew(g.url)).status === 200, 5_000, 10)));
    expect(Date.now() - since).toBeLessThanOrEqual(1_000);
    const page = await portalRequest(portals[B]!, '/portal/keys/acme-1', { cookie: holder.cookie });
    expect(page.text).toContain('127.0.0.2');
    // Audited as the holder, through the portal.
    const audit = await operator.admin.readAudit({ keyId: 'acme-1', limit: 5 });
    expect(audit.entries[0]).toMatchObject({ actor: 'holder:acme:link', channel: 'portal', action: 'change' });
  });

  test('countries "request": the holder\'s request, once approved, makes the same key answer 200 for that country on both', async () => {
    const asked = await postAs(holder, portals[A]!, publicUrl, '/portal/keys/acme-1/countries', { countries: 'FR' });
    expect(asked.status).toBe(303);
    expect(asked.location).toBe('/portal/keys/acme-1?done=requested');
    expect((await getWithKey(gateways[B]!.url, '/v1/properties?country=FR', acmeValue)).status).toBe(403);
    const pending = await operator.requests.list({ status: 'pending', accountId: 'acme', limit: 10 });
    expect(pending.requests).toHaveLength(1);
    expect(pending.requests[0]).toMatchObject({ keyId: 'acme-1', change: { countries: ['FR'] } });
    expect((await portalRequest(portals[B]!, '/portal/requests', { cookie: holder.cookie })).text).toMatch(/add FR<\/td><td class="request-pending">pending/);

    await operator.requests.decide(pending.requests[0]!.id, 'approved', 'test-operator');
    const since = Date.now();
    await Promise.all(gateways.map((g) => until(`${g.url} serves FR`, async () => (await getWithKey(g.url, '/v1/properties?country=FR', acmeValue)).status === 200, 5_000, 10)));
    expect(Date.now() - since).toBeLessThanOrEqual(1_000);
    expect((await portalRequest(portals[A]!, '/portal/requests', { cookie: holder.cookie })).text).toMatch(/add FR<\/td><td class="request-approved">approved/);
  });

  test('tier "request": a pending upgrade request; declined, the key stays Standard and the holder sees the outcome', async () => {
    const asked = await postAs(holder, portals[B]!, publicUrl, '/portal/keys/acme-1/tier', { tier: 'advanced' });
    expect(asked.location).toBe('/portal/keys/acme-1?done=requested');
    const pending = await operator.requests.list({ status: 'pending', keyId: 'acme-1', limit: 10 });
    expect(pending.requests.map((r) => r.change)).toEqual([{ tier: 'advanced' }]);
    await operator.requests.decide(pending.requests[0]!.id, 'declined', 'test-operator');
    expect((await operator.admin.show('acme-1')).tier).toBe('standard');
    expect((await portalRequest(portals[A]!, '/portal/requests', { cookie: holder.cookie })).text).toMatch(/tier advanced<\/td><td class="request-declined">declined/);
  });

  test('a hot reload to countries "direct" adds a country at once', async () => {
    writePortalConfig(configFile, { countries: 'direct', tier: 'direct' });
    await until('the reloaded policy offers "Add countries" on both', async () =>
      (await Promise.all(portals.map((p) => portalRequest(p, '/portal/keys/acme-1', { cookie: holder.cookie })))).every((a) => a.text.includes('Add them now')));
    const added = await postAs(holder, portals[B]!, publicUrl, '/portal/keys/acme-1/countries', { countries: 'de' });
    expect(added.location).toBe('/portal/keys/acme-1?done=countries');
    const since = Date.now();
    await Promise.all(gateways.map((g) => until(`${g.url} serves DE`, async () => (await getWithKey(g.url, '/v1/properties?country=DE', acmeValue)).status === 200, 5_000, 10)));
    expect(Date.now() - since).toBeLessThanOrEqual(1_000);
    expect((await operator.requests.list({ status: 'pending', limit: 10 })).requests).toHaveLength(0);
  });

  test('a direct upgrade makes /v1/insights answer as for an Advanced key', async () => {
    expect((await getWithKey(gateways[A]!.url, '/v1/insights/market', acmeValue)).status).toBe(403);
    const upgraded = await postAs(holder, portals[A]!, publicUrl, '/portal/keys/acme-1/tier', { tier: 'advanced' });
    expect(upgraded.location).toBe('/portal/keys/acme-1?done=tier');
    // No insights service is configured: an Advanced key is answered 503 not_configured (a Standard one 403).
    await Promise.all(gateways.map((g) => until(`${g.url} answers as for Advanced`, async () => (await getWithKey(g.url, '/v1/insights/market', acmeValue)).status === 503, 5_000, 10)));
  });

  test('a hot reload of addresses: false removes the form and refuses a forged post', async () => {
    writePortalConfig(configFile, { addresses: false, countries: 'direct', tier: 'direct' });
    await until('the address form is gone on both', async () =>
      (await Promise.all(portals.map((p) => portalRequest(p, '/portal/keys/acme-1', { cookie: holder.cookie })))).every((a) => a.status === 200 && !a.text.includes('name="addresses"')));
    const forged = await postAs(holder, portals[B]!, publicUrl, '/portal/keys/acme-1/addresses', { addresses: '10.0.0.1' });
    expect(forged.status).toBe(403);
    expect((await operator.admin.show('acme-1')).addresses).toEqual(['127.0.0.1', '127.0.0.2']);
    writePortalConfig(configFile);
    await until('the address form is back', async () => (await portalRequest(portals[A]!, '/portal/keys/acme-1', { cookie: holder.cookie })).text.includes('name="addresses"'));
  });
});
