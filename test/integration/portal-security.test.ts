/**
 * The portal faces the internet (docs/portal.md): isolation between accounts, forged posts,
 * the failed sign-in budget, bad input in every form, roll and revoke, the listener off when
 * PORTAL_PORT is unset.
 */
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import net from 'node:net';
import { Webhook } from 'standardwebhooks';
import path from 'node:path';
import { getWithKey, makeTempDir, startGateway, writeKeysFile, type Proc } from '../kit/gateway-stack';
import { csrfIn, holderFromLink, portalRequest, postAs, signInWithLink, writePortalConfig, type Holder } from '../kit/portal';
import { startPortalStack, type PortalStack } from '../kit/portal-stack';
import { freePort } from '../kit/redis-server';

let stack: PortalStack;
let backend: Proc;
let gateway: Proc;
let portal: string;
let publicUrl: string;
let operator: PortalStack['operator'];
let holder: Holder;
let acmeValue: string;
const NOTE = 'OPERATOR-ONLY-NOTE-7f3a';
const WEBHOOK_SECRET = `whsec_${randomBytes(32).toString('base64')}`;
/** Verified webhook deliveries: type and data. */
const events: Array<{ type: string; data: Record<string, unknown> }> = [];
const receiver = http.createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    try {
      events.push(new Webhook(WEBHOOK_SECRET.slice('whsec_'.length)).verify(Buffer.concat(chunks).toString('utf8'), req.headers as Record<string, string>) as (typeof events)[number]);
      res.writeHead(204).end();
    } catch {
      res.writeHead(400).end();
    }
  });
});

beforeAll(async () => {
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const hooks = { WEBHOOK_URL: `http://127.0.0.1:${(receiver.address() as net.AddressInfo).port}/hooks`, WEBHOOK_SECRET, WEBHOOK_POLL_MS: '100' };
  stack = await startPortalStack({ selfService: { countries: 'direct', tier: 'direct', roll_grace_seconds: 600 }, env: () => hooks });
  ({ backend, gateway, portal, operator } = stack);
  publicUrl = portal;
  await operator.accounts.create({ id: 'acme', name: 'Acme Ltd', emails: ['ops@acme.test'] });
  await operator.accounts.create({ id: 'other', name: 'Other Corp', emails: ['it@other.test'] });
  acmeValue = await operator.key('acme-1', 'acme', { note: NOTE });
  await operator.key('acme-2', 'acme');
  await operator.key('other-1', 'other', { note: NOTE });
  await operator.key('loose-1', undefined);
  holder = await holderFromLink(portal, publicUrl, await operator.links.issue('acme'));
}, 60_000);

afterAll(async () => {
  await stack?.stop();
  receiver.close();
});

const get = (p: string) => portalRequest(portal, p, { cookie: holder.cookie });
const post = (p: string, form: Record<string, string | string[]> = {}) => postAs(holder, portal, publicUrl, p, form);
const record = (id: string) => operator.admin.show(id);

/** No page ever shows a hash, a note, or another account's data. */
function expectClean(html: string): void {
  expect(html).not.toContain(NOTE);
  expect(html).not.toMatch(/[0-9a-f]{64}/);
  expect(html).not.toContain('other-1');
  expect(html).not.toContain('Other Corp');
  expect(html).not.toContain('loose-1');
  expect(html).not.toContain(acmeValue);
}

test('every page the holder reaches is free of hashes, notes and other accounts\' data, with the security headers', async () => {
  for (const p of ['/portal/keys', '/portal/keys/acme-1', '/portal/keys/acme-2', '/portal/keys/acme-1/revoke', '/portal/requests', '/portal/sign-in']) {
    const a = await get(p);
    expect(a.status).toBe(200);
    expectClean(a.text);
    expect(a.headers['content-security-policy']).toContain("script-src 'none'");
    expect(a.headers['x-frame-options']).toBe('DENY');
    expect(a.headers['cache-control']).toBe('no-store');
    expect(a.text).not.toMatch(/<script/i);
  }
});

test('another account\'s key, an operator\'s key and a guessed id answer 404 by page and by form post, and nothing changes', async () => {
  const before = await record('other-1');
  for (const id of ['other-1', 'loose-1', 'nope', 'acme-1x']) {
    for (const p of ['', '/revoke']) {
      const a = await get(`/portal/keys/${id}${p}`);
      expect(a.status).toBe(404);
      expectClean(a.text);
    }
    for (const [action, form] of [['addresses', { addresses: '10.1.1.1' }], ['countries', { countries: 'DE' }], ['tier', { tier: 'advanced' }], ['roll', {}], ['revoke', { confirm: 'revoke' }]] as const) {
      const a = await post(`/portal/keys/${id}/${action}`, form);
      expect(a.status).toBe(404);
    }
  }
  expect(await record('other-1')).toEqual(before);
});

test('forged posts (no CSRF token, a wrong one, a foreign Origin, a foreign Referer, neither header) change nothing', async () => {
  const before = await record('acme-2');
  const target = '/portal/keys/acme-2/addresses';
  const form = { addresses: '10.9.9.9' };
  const answers = await Promise.all([
    portalRequest(portal, target, { cookie: holder.cookie, origin: publicUrl, form }),
    portalRequest(portal, target, { cookie: holder.cookie, origin: publicUrl, form: { ...form, _csrf: 'x'.repeat(43) } }),
    portalRequest(portal, target, { cookie: holder.cookie, origin: 'https://evil.example', form: { ...form, _csrf: holder.csrf } }),
    portalRequest(portal, target, { cookie: holder.cookie, origin: 'null', form: { ...form, _csrf: holder.csrf } }),
    portalRequest(portal, target, { cookie: holder.cookie, referer: 'https://evil.example/page', form: { ...form, _csrf: holder.csrf } }),
    portalRequest(portal, target, { cookie: holder.cookie, form: { ...form, _csrf: holder.csrf } }),
  ]);
  expect(answers.map((a) => a.status)).toEqual([403, 403, 403, 403, 403, 403]);
  expect(await record('acme-2')).toEqual(before);
  // The same post from a page of the portal (Referer, no Origin) is accepted.
  const fromPage = await portalRequest(portal, target, { cookie: holder.cookie, referer: `${publicUrl}/portal/keys/acme-2`, form: { ...form, _csrf: holder.csrf } });
  expect(fromPage.status).toBe(303);
  expect((await record('acme-2')).addresses).toEqual(['10.9.9.9']);
});

test('bad input in every form: the form back (400) with a message beside the field, nothing changed, never a 500', async () => {
  const before = await record('acme-1');
  const cases: Array<[string, Record<string, string | string[]>, string]> = [
    ['addresses', { addresses: 'not-an-address' }, 'addresses'],
    ['addresses', { addresses: Array.from({ length: 17 }, (_v, i) => `10.0.0.${i + 1}`).join('\n') }, 'addresses'],
    ['addresses', { addresses: '0.0.0.0/0' }, 'addresses'],
    ['addresses', { addresses: 'any' }, 'addresses'],
    ['addresses', { addresses: '' }, 'addresses'],
    ['addresses', { addresses: '1'.repeat(5000) }, 'addresses'],
    ['addresses', { addresses: ['10.0.0.1', '10.0.0.2'] }, 'addresses'],
    ['countries', { countries: 'XX' }, 'countries'],
    ['countries', { countries: 'GB' }, 'countries'],
    ['countries', { countries: 'x'.repeat(5000) }, 'countries'],
    ['countries', { countries: ['DE', 'FR'] }, 'countries'],
    ['tier', { tier: 'platinum' }, 'tier'],
    ['tier', { tier: ['advanced', 'advanced'] }, 'tier'],
  ];
  for (const [action, form, field] of cases) {
    const a = await post(`/portal/keys/acme-1/${action}`, form);
    expect({ action, form: JSON.stringify(form).slice(0, 60), status: a.status }).toEqual({ action, form: JSON.stringify(form).slice(0, 60), status: 400 });
    expect(a.text).toContain(`id="${field}-error"`);
    expect(a.text).toContain(`aria-describedby="${field}-error"`);
    expectClean(a.text);
  }
  expect(await record('acme-1')).toEqual(before);
  // An oversized body and a body with too many fields are refused too, never a 500.
  const big = await post('/portal/keys/acme-1/addresses', { addresses: 'a'.repeat(40_000) });
  expect(big.status).toBe(400);
  const many = await post('/portal/keys/acme-1/addresses', Object.fromEntries(Array.from({ length: 40 }, (_v, i) => [`f${i}`, 'x'])));
  expect(many.status).toBe(400);
  expect(await record('acme-1')).toEqual(before);
});

test('roll: the new value shown once works at once; the old one keeps working through the grace', async () => {
  const rolled = await post('/portal/keys/acme-1/roll');
  expect(rolled.status).toBe(201);
  const value = /id="key-value">([^<]+)</.exec(rolled.text)![1]!;
  expect(value).toMatch(/^plk_/);
  expect(rolled.text).toMatch(/keeps working until/);
  expect((await getWithKey(gateway.url, '/v1/ping', value)).status).toBe(200);
  expect((await getWithKey(gateway.url, '/v1/ping', acmeValue)).status).toBe(200);
  const page = await get('/portal/keys/acme-1');
  expect(page.text).not.toContain(value);
  expect(page.text).toContain('Previous value');
  const audit = await operator.admin.readAudit({ keyId: 'acme-1', limit: 1 });
  expect(audit.entries[0]).toMatchObject({ actor: 'holder:acme:link', channel: 'portal', action: 'roll' });
});

test('revoke needs the confirmation step; then the key stops working and its forms are gone', async () => {
  const value = await operator.key('acme-3', 'acme');
  const bare = await post('/portal/keys/acme-3/revoke');
  expect(bare.status).toBe(303);
  expect(bare.location).toBe('/portal/keys/acme-3/revoke');
  expect((await record('acme-3')).status).toBe('active');
  const confirm = await get('/portal/keys/acme-3/revoke');
  expect(confirm.status).toBe(200);
  const done = await post('/portal/keys/acme-3/revoke', { confirm: 'revoke', _csrf: csrfIn(confirm.text) });
  expect(done.location).toBe('/portal/keys/acme-3?done=revoked');
  expect((await record('acme-3')).status).toBe('revoked');
  expect((await getWithKey(gateway.url, '/v1/ping', value)).status).toBe(401);
  const page = await get('/portal/keys/acme-3');
  expect(page.text).not.toContain('name="addresses"');
  expect((await post('/portal/keys/acme-3/addresses', { addresses: '10.0.0.1' })).status).toBe(403);
});

test('a paused key says why and what settles it', async () => {
  await operator.key('acme-4', 'acme');
  await operator.admin.pause('acme-4', 'unpaid_renewal');
  const page = await get('/portal/keys/acme-4');
  expect(page.text).toContain('renewal is unpaid');
  expect(page.text).toContain('<li data-reason="unpaid_renewal">');
});

test('failed sign-ins: after 10 in a minute from one address, further attempts are refused (429) for the rest of the minute', async () => {
  // Away from a minute's edge, so the ten failures and the refusal fall in one minute.
  const left = 60_000 - (Date.now() % 60_000);
  if (left < 20_000) await new Promise((r) => setTimeout(r, left + 200));
  const from = '127.0.0.3';
  for (let i = 0; i < 10; i++) expect((await signInWithLink(portal, publicUrl, `wrong-${i}`, from)).status).toBe(400);
  const good = await operator.links.issue('acme');
  const refused = await signInWithLink(portal, publicUrl, good, from);
  expect(refused.status).toBe(429);
  expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
  // Another address is not affected, and the refused attempt did not use the link.
  expect((await signInWithLink(portal, publicUrl, good, '127.0.0.4')).status).toBe(303);
  // Attempts are counted as they start: 40 wrong links at once from a fresh address, 10 are tried.
  const burst = await Promise.all(Array.from({ length: 40 }, (_, i) => signInWithLink(portal, publicUrl, `burst-${i}`, '127.0.0.5')));
  expect(burst.filter((a) => a.status === 400)).toHaveLength(10);
  expect(burst.filter((a) => a.status === 429)).toHaveLength(30);
});

test('a session ends at sign-out', async () => {
  const h = await holderFromLink(portal, publicUrl, await operator.links.issue('acme'));
  expect((await postAs(h, portal, publicUrl, '/portal/sign-out')).status).toBe(303);
  expect((await portalRequest(portal, '/portal/keys', { cookie: h.cookie })).location).toBe('/portal/sign-in');
  expect((await postAs(h, portal, publicUrl, '/portal/keys/acme-2/roll')).status).toBe(401);
});

test('the holder\'s changes above were sent as key.* webhooks, signed, with no value or hash', async () => {
  const wanted = [['key.changed', 'acme-2'], ['key.rolled', 'acme-1'], ['key.revoked', 'acme-3']];
  const deadline = Date.now() + 15_000;
  while (!wanted.every(([type, id]) => events.some((e) => e.type === type && e.data.key_id === id)) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  for (const [type, id] of wanted) expect(events.some((e) => e.type === type && e.data.key_id === id)).toBe(true);
  expect(JSON.stringify(events)).not.toMatch(/[0-9a-f]{64}|plk_/);
  expect(events.filter((e) => e.data.key_id === 'other-1' && e.type !== 'key.created')).toEqual([]);
});

test('with PORTAL_PORT unset, nothing listens (connection refused)', async () => {
  // A gateway given PORTAL_PUBLIC_URL but no PORTAL_PORT: the portal is off.
  const port = await freePort();
  const other = await startGateway({ backendUrl: backend.url, keysFile: writeKeysFile([]), gatewayConfig: writeConfig(), env: { PORTAL_PUBLIC_URL: `http://127.0.0.1:${port}` } });
  try {
    expect(other.output.join('\n')).not.toContain('portal listening');
    const error = await new Promise<NodeJS.ErrnoException | undefined>((resolve) => {
      const socket = net.connect(port, '127.0.0.1');
      socket.once('connect', () => { socket.destroy(); resolve(undefined); });
      socket.once('error', (err) => resolve(err));
    });
    expect(error?.code).toBe('ECONNREFUSED');
  } finally {
    await other.stop();
  }
});

function writeConfig(): string {
  const file = path.join(makeTempDir(), 'gateway.yaml');
  writePortalConfig(file);
  return file;
}
