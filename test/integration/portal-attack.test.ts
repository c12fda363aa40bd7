/**
 * The portal attacked as an outsider and as a holder after another account's data (docs/portal.md):
 * what the other portal suites do not cover already.
 */
import http from 'node:http';
import zlib from 'node:zlib';
import { csrfIn, holderFromLink, portalRequest, postAs, sessionCookie, type Holder } from '../kit/portal';
import { startPortalStack, type PortalStack } from '../kit/portal-stack';

let stack: PortalStack;
let portal: string;
let publicUrl: string;
let operator: PortalStack['operator'];
let holder: Holder;

beforeAll(async () => {
  // The attacks below make more changes a minute than the holders' budget (30 per account) allows:
  // the budget has its own suite (portal-change-budget.test.ts), so it is raised here.
  stack = await startPortalStack({ selfService: { changes_per_minute: 10_000 } });
  ({ portal, operator } = stack);
  publicUrl = portal;
  await operator.accounts.create({ id: 'acme', name: 'Acme <b>Ltd</b>', emails: ['ops@acme.test'] });
  await operator.accounts.create({ id: 'other', name: 'Other Corp', emails: ['it@other.test'] });
  await operator.key('acme-1', 'acme');
  await operator.key('acme-2', 'acme');
  await operator.key('other-1', 'other');
  holder = await holderFromLink(portal, publicUrl, await operator.links.issue('acme'));
}, 60_000);

afterAll(async () => stack?.stop());

const get = (p: string) => portalRequest(portal, p, { cookie: holder.cookie });
const post = (p: string, form: Record<string, string | string[]> = {}) => postAs(holder, portal, publicUrl, p, form);
const record = (id: string) => operator.admin.show(id);

/** The notice of a page (role status or alert), or undefined. */
const notice = (page: string): string | undefined => /role="(?:status|alert)">([^<]*)</.exec(page)?.[1];
const fieldError = (page: string): string | undefined => /class="field-error"[^>]*>([^<]*)</.exec(page)?.[1];

test('the session cookie: HttpOnly, SameSite=Lax, Path=/portal, not Secure on an http public URL; a sign-in never keeps the id it was sent', async () => {
  const a = await portalRequest(portal, '/portal/link', { cookie: holder.cookie, origin: publicUrl, form: { token: await operator.links.issue('acme') } });
  const line = ([] as string[]).concat(a.headers['set-cookie'] ?? []).find((c) => c.startsWith('lgw_portal='))!;
  expect(line.split('; ').slice(1).sort()).toEqual(['HttpOnly', 'Max-Age=28800', 'Path=/portal', 'SameSite=Lax']);
  expect(sessionCookie(a)).not.toBe(holder.cookie);
  holder = { cookie: sessionCookie(a), csrf: csrfIn((await portalRequest(portal, '/portal/keys', { cookie: sessionCookie(a) })).text) };
});

test('signing in again ends the session the browser held before (another account\'s too)', async () => {
  const other = await holderFromLink(portal, publicUrl, await operator.links.issue('other'));
  const again = await portalRequest(portal, '/portal/link', { cookie: other.cookie, origin: publicUrl, form: { token: await operator.links.issue('acme') } });
  expect(again.status).toBe(303);
  expect((await portalRequest(portal, '/portal/keys', { cookie: other.cookie })).location).toBe('/portal/sign-in');
  expect((await portalRequest(portal, '/portal/keys', { cookie: sessionCookie(again) })).text).toContain('acme-1');
});

test('a CSRF token of another live session is refused', async () => {
  const other = await holderFromLink(portal, publicUrl, await operator.links.issue('acme'));
  expect((await postAs({ cookie: holder.cookie, csrf: other.csrf }, portal, publicUrl, '/portal/keys/acme-1/roll')).status).toBe(403);
  expect((await record('acme-1')).previous_key_valid_until).toBeUndefined();
});

test('odd key ids (bad percent-encoding, encoded slashes, prototype names, 8,000 characters, other case, trailing slash) are 404 by page and post', async () => {
  const ids = ['%E0%A4%A', 'acme-1%2F..%2Fother-1', '..%2Fother-1', '__proto__', 'constructor', 'a'.repeat(8000), 'ACME-1', 'acme-1%00'];
  for (const id of ids) {
    expect({ id: id.slice(0, 30), status: (await get(`/portal/keys/${id}`)).status }).toEqual({ id: id.slice(0, 30), status: 404 });
    expect({ id: id.slice(0, 30), status: (await post(`/portal/keys/${id}/roll`)).status }).toEqual({ id: id.slice(0, 30), status: 404 });
  }
  expect((await get('/portal/keys/acme-1/')).status).toBe(404);
  expect((await record('acme-1')).previous_key_valid_until).toBeUndefined();
});

test('?done= with a prototype name (constructor, __proto__, toString) shows no notice', async () => {
  for (const done of ['constructor', '__proto__', 'toString', 'hasOwnProperty']) {
    const page = await get(`/portal/keys/acme-1?done=${done}`);
    expect(page.status).toBe(200);
    expect(notice(page.text)).toBeUndefined();
  }
  expect(notice((await get('/portal/keys/acme-1?done=addresses')).text)).toMatch(/addresses are saved/);
});

test('ranges wider than a /8 of IPv4 or a /32 of IPv6 are refused as "any" is, however written; a /8, a /32, mapped forms and duplicates are fine', async () => {
  const before = await record('acme-2');
  for (const addresses of [
    '0.0.0.0/1\n128.0.0.0/1', '::/1\n8000::/1', '::ffff:0.0.0.0/97\n::ffff:128.0.0.0/97', '0.0.0.0/2 64.0.0.0/2 128.0.0.0/1 10.0.0.1',
    '0.0.0.0/1 128.0.0.0/2 192.0.0.0/3 224.0.0.0/4', '::/1 8000::/2 c000::/3 e000::/4', '0.0.0.0/1', '10.0.0.0/8 11.0.0.0/8', '2001:db8::/31',
  ]) {
    const a = await post('/portal/keys/acme-2/addresses', { addresses });
    expect({ addresses, status: a.status }).toEqual({ addresses, status: 400 });
    expect(fieldError(a.text)).toMatch(/every IPv[46] address/);
  }
  expect(await record('acme-2')).toEqual(before);
  expect((await post('/portal/keys/acme-2/addresses', { addresses: '10.0.0.0/8\n::ffff:10.0.0.1\n10.0.0.1\n2001:DB8::/32' })).status).toBe(303);
  expect((await record('acme-2')).addresses).toEqual(['10.0.0.0/8', '10.0.0.1', '2001:db8::/32']);
});

function rawPost(p: string, headers: Record<string, string>, body: Buffer | string): Promise<{ status: number; text: string }> {
  const base = new URL(portal);
  return new Promise((resolve, reject) => {
    const req = http.request({ host: base.hostname, port: Number(base.port), method: 'POST', path: p, headers: { cookie: holder.cookie, origin: publicUrl, ...headers, 'content-length': String(Buffer.byteLength(body)) }, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

test('odd bodies (invalid UTF-8, a gzip bomb, JSON, bracketed and prototype names, no content type) change nothing and never answer 500', async () => {
  const before = await record('acme-1');
  const form = `_csrf=${holder.csrf}&addresses=10.1.1.1`;
  const urlencoded = { 'content-type': 'application/x-www-form-urlencoded' };
  const cases: Array<[string, Record<string, string>, Buffer | string, number]> = [
    ['invalid UTF-8', urlencoded, Buffer.concat([Buffer.from(form), Buffer.from([0xff, 0xfe])]), 400],
    ['gzip bomb', { ...urlencoded, 'content-encoding': 'gzip' }, zlib.gzipSync(`${form}&x=${'a'.repeat(5_000_000)}`), 400],
    ['JSON', { 'content-type': 'application/json' }, JSON.stringify({ _csrf: holder.csrf, addresses: '10.1.1.1' }), 403],
    ['__proto__[_csrf]', urlencoded, '__proto__[_csrf]=x&addresses=10.1.1.1', 403],
    ['__proto__ as a field', urlencoded, `__proto__=x&constructor=y&_csrf=x&addresses=10.1.1.1`, 403],
    ['addresses[]', urlencoded, `_csrf=${holder.csrf}&addresses[]=10.1.1.1`, 400],
    ['no content type', {}, form, 403],
  ];
  for (const [name, headers, body, status] of cases) {
    const a = await rawPost('/portal/keys/acme-1/addresses', headers, body);
    expect({ name, status: a.status }).toEqual({ name, status });
    expect(a.text).not.toMatch(/ at [\w.]+ \(|node_modules/);
  }
  expect(await record('acme-1')).toEqual(before);
});

test('a compressed form (gzip, deflate, br), however small and valid, is refused as the message says, as the admin API refuses one', async () => {
  const before = await record('acme-1');
  const form = Buffer.from(`_csrf=${holder.csrf}&addresses=10.9.9.9`);
  const urlencoded = { 'content-type': 'application/x-www-form-urlencoded' };
  for (const [encoding, body] of [['gzip', zlib.gzipSync(form)], ['deflate', zlib.deflateSync(form)], ['br', zlib.brotliCompressSync(form)]] as const) {
    const a = await rawPost('/portal/keys/acme-1/addresses', { ...urlencoded, 'content-encoding': encoding }, body);
    expect({ encoding, status: a.status }).toEqual({ encoding, status: 400 });
    expect(a.text).toContain('not compressed');
  }
  expect(await record('acme-1')).toEqual(before);
  // The same form, plain, is taken.
  expect((await rawPost('/portal/keys/acme-1/addresses', urlencoded, form)).status).toBe(303);
  expect((await record('acme-1')).addresses).toEqual(['10.9.9.9']);
});

test('requests: the same one sent twice is recorded once, and a key has at most 50 pending', async () => {
  const pendingOf = async (): Promise<number> => (await operator.requests.list({ keyId: 'acme-1', status: 'pending', limit: 100 })).requests.length;
  const first = await post('/portal/keys/acme-1/tier', { tier: 'advanced' });
  expect(first.status).toBe(303);
  const again = await post('/portal/keys/acme-1/tier', { tier: 'advanced' }); // a form sent twice
  expect(again.status).toBe(303);
  expect(again.headers.location).toBe(first.headers.location);
  expect(await pendingOf()).toBe(1);
  const codes = ['AD', 'AE', 'AF', 'AG', 'AL', 'AM', 'AO', 'AR', 'AT', 'AU', 'AZ', 'BA', 'BB', 'BD', 'BE', 'BF', 'BG', 'BH', 'BI', 'BJ', 'BN', 'BO', 'BR', 'BS', 'BT',
    'BW', 'BY', 'BZ', 'CA', 'CD', 'CF', 'CG', 'CH', 'CI', 'CL', 'CM', 'CN', 'CO', 'CR', 'CU', 'CV', 'CY', 'CZ', 'DE', 'DJ', 'DK', 'DM', 'DO', 'DZ'];
  for (const c of codes) expect({ c, status: (await post('/portal/keys/acme-1/countries', { countries: c })).status }).toEqual({ c, status: 303 });
  expect(await pendingOf()).toBe(50);
  const over = await post('/portal/keys/acme-1/countries', { countries: 'PT' });
  expect(over.status).toBe(400);
  expect(fieldError(over.text)).toMatch(/50 requests waiting/);
  expect(await pendingOf()).toBe(50);
  // Once one is decided, the key may ask again.
  const [newest] = (await operator.requests.list({ keyId: 'acme-1', status: 'pending', limit: 1 })).requests;
  await operator.requests.decide(newest!.id, 'declined', 'op');
  expect((await post('/portal/keys/acme-1/countries', { countries: 'PT' })).status).toBe(303);
});

test('roll: the same form sent twice (a second click, a refreshed result page) rolls once; the value in use keeps its grace', async () => {
  const page = await get('/portal/keys/acme-2');
  const version = /name="version" value="([^"]+)"/.exec(page.text)![1]!;
  const first = await post('/portal/keys/acme-2/roll', { version });
  expect(first.status).toBe(201);
  const after = await operator.admin.show('acme-2');
  const again = await post('/portal/keys/acme-2/roll', { version });
  expect(again.status).toBe(303);
  expect(again.headers.location).toBe('/portal/keys/acme-2?done=not-rolled');
  expect((await get(again.headers.location as string)).text).toContain('Nothing was rolled');
  // Nothing changed: the grace of the value before the first roll still runs, the new value stands.
  expect(await operator.admin.show('acme-2')).toEqual(after);
  // The page shown now carries the new state: rolling from it works.
  const fresh = /name="version" value="([^"]+)"/.exec((await get('/portal/keys/acme-2')).text)![1]!;
  expect(fresh).not.toBe(version);
  expect((await post('/portal/keys/acme-2/roll', { version: fresh })).status).toBe(201);
});

test('an account name with markup is escaped in the portal\'s header', async () => {
  const page = await get('/portal/keys');
  expect(page.text).toContain('Acme &lt;b&gt;Ltd&lt;/b&gt;');
  expect(page.text).not.toContain('<b>Ltd');
});
