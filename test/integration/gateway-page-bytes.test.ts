/**
 * The "public-array" page format (docs/operating.md, "Listing store contract"): the gateway asks for it, and a
 * store that answers in it has its page passed to the caller as the bytes it sent when they are
 * provably clean; a page carrying a withdrawn listing or a private field is still cleaned, a
 * malformed one or a bad `X-Next-After` still refused with an opaque 500, and a store that ignores
 * the request (the `{items, next_after}` form) is read as before.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  allPropertyNames,
  expectError,
  expectKeyedSuccess,
  randomKeyValue,
  send,
  startStack,
  startStub,
  type Answer,
  type Stack,
  type Stub,
} from '../kit/gateway-stack';
import { announcedUrl } from '../kit/log-lines';

/** The fields every listing carries (the public document requires them). */
const T = '"listing_type":"sale","property_type":"house"';

let stub: Stub;
let opsUrl: string;
let stack: Stack;
/** What the stub answers to a page request: body and headers (content type and length are added). */
let page: { body: string | Buffer; headers: Record<string, string> };

function answer(req: IncomingMessage, res: ServerResponse): void {
  const body = typeof page.body === 'string' ? Buffer.from(page.body) : page.body;
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': body.length, ...page.headers });
  res.end(body);
  void req;
}

const arrayPage = (body: string | Buffer, next?: string): typeof page => ({
  body,
  headers: { 'x-page-format': 'public-array', ...(next === undefined ? {} : { 'x-next-after': next }) },
});

beforeAll(async () => {
  stub = await startStub(answer);
  stack = await startStack({
    keys: [{ id: 'k', value: randomKeyValue('k'), tier: 'standard', countries: ['GB'], address: '127.0.0.1', status: 'active' }],
    backendUrl: stub.url,
    gateways: [{ OPS_PORT: '0' }],
  });
  opsUrl = await announcedUrl(stack.gateways[0]!, 'ops listening');
});
afterAll(async () => {
  await stack?.stop();
  await stub?.close();
});

const LIST = '/v1/properties?country=GB&limit=5';
const get = (path = LIST): Promise<Answer> => send(stack.url, path, { headers: { 'x-api-key': stack.key('k').value } });

/** 500 internal_error, nothing of the store's body in it. */
function expectOpaque500(a: Answer): void {
  expectError(a, 'internal_error');
  expect(a.text).not.toContain('secret');
}

test('the gateway asks the store for the public-array format', async () => {
  page = arrayPage('[]');
  const before = stub.requests.length;
  expectKeyedSuccess(await get());
  const request = stub.requests[before]!;
  expect(request.headers['x-page-format']).toBe('public-array');
  expect(request.headers['x-api-key']).toBeUndefined();
});

test('a clean page is passed on byte for byte: numbers and escapes as written, the next position from X-Next-After', async () => {
  // Numbers a parser would rewrite (1.50, 1E2, a 17-digit integer), escapes and UTF-8 as the store wrote them.
  const items = `[{"id":"GB-1","country":"GB",${T},"price":1.50,"area":1E2,"ref":12345678901234567,"title":"Caf\\u00e9 \\"Le Nid\\" in Ni\u00e7e","ok":true,"note":null},` +
    `{"id":"GB-2","country":"GB",${T},"price":-0.0,"title":"\u2603 and _underscores_ in a value"}]`;
  page = arrayPage(items, 'GB-2');
  const a = await get();
  expectKeyedSuccess(a);
  expect(a.text.startsWith(`{"data":${items},"next_cursor":"`)).toBe(true);
  expect(a.body.data.map((l: { id: string }) => l.id)).toEqual(['GB-1', 'GB-2']);
  expect(typeof a.body.next_cursor).toBe('string');

  // The cursor carries the header's position back to the store.
  page = arrayPage('[]');
  const before = stub.requests.length;
  const next = await get(`${LIST}&cursor=${a.body.next_cursor as string}`);
  expectKeyedSuccess(next);
  expect(next.body).toEqual({ data: [], next_cursor: null });
  expect(new URL(stub.requests[before]!.url, 'http://x').searchParams.get('after')).toBe('GB-2');
});

test.each([
  ['a withdrawn listing', `[{"id":"GB-1","country":"GB",${T}},{"id":"GB-2","country":"GB",${T},"withdrawn":true}]`, ['GB-1']],
  ['a withdrawn flag set to false', `[{"id":"GB-1","country":"GB",${T},"withdrawn":false}]`, ['GB-1']],
  ['a storage field', `[{"id":"GB-1","country":"GB",${T},"_shard":"secret-shard"}]`, ['GB-1']],
  ['a storage field spelt with an escape', `[{"id":"GB-1","country":"GB",${T},"\\u005fshard":"secret-shard"}]`, ['GB-1']],
  ['withdrawn spelt with an escape', `[{"id":"GB-1","country":"GB",${T},"withdr\\u0061wn":true},{"id":"GB-2","country":"GB",${T}}]`, ['GB-2']],
  ['a nested storage field (cleaned at the top level only, as before)', `[{"id":"GB-1","country":"GB",${T},"agent":{"name":"A"},"_x":{"secret":1}}]`, ['GB-1']],
  ['members in another order, with whitespace', `[ {"country":"GB",${T}, "id":"GB-1", "_rev":"secret"} ]`, ['GB-1']],
])('a page with %s is cleaned: no withdrawn listing, no private field', async (_label, body, ids) => {
  page = arrayPage(body);
  const a = await get();
  expectKeyedSuccess(a);
  expect(a.body.data.map((l: { id: string }) => l.id)).toEqual(ids);
  const names = allPropertyNames(a.body.data);
  expect(names.has('withdrawn')).toBe(false);
  expect([...names].filter((n) => n.startsWith('_'))).toEqual([]);
  expect(a.text).not.toContain('secret');
});

test.each([
  ['cut short', `[{"id":"GB-1","country":"GB",${T}}`],
  ['not an array', '{"items":[],"next_after":null,"secret":1}'],
  ['an element that is not a listing', `[{"id":"GB-1","country":"GB",${T}},1]`],
  ['a listing without a string id', `[{"id":7,"country":"GB",${T},"secret":1}]`],
  ['a listing whose id is repeated as a number', `[{"id":"GB-1","country":"GB",${T},"id":7}]`],
  ['trailing bytes', `[{"id":"GB-1","country":"GB",${T}}] secret`],
  ['not JSON', '<html>secret</html>'],
])('a page %s → 500 internal_error, nothing of it answered', async (_label, body) => {
  page = arrayPage(body);
  expectOpaque500(await get());
});

test.each([
  ['a space in it', 'GB 1'],
  ['a non-ASCII byte in it', 'GB-\u00e9'],
])('an X-Next-After with %s → 500 internal_error', async (_label, next) => {
  page = { body: '[]', headers: { 'x-page-format': 'public-array', 'x-next-after': next } };
  expectOpaque500(await get());
});

test('a page refused for its shape is counted in gateway_upstream_errors_total, as each failure that decides an answer', async () => {
  const unreadable = async (): Promise<number> => {
    const text = await (await fetch(`${opsUrl}/metrics`)).text();
    return Number(/gateway_upstream_errors_total\{kind="unreadable"\} (\d+)/.exec(text)?.[1] ?? 0);
  };
  const before = await unreadable();
  page = arrayPage('{"items":[],"next_after":null}');
  expectOpaque500(await get());
  page = { body: '[]', headers: { 'x-page-format': 'public-array', 'x-next-after': 'GB 1' } };
  expectOpaque500(await get());
  // Counted when the answer is done (its log line): poll briefly.
  const deadline = Date.now() + 5000;
  while ((await unreadable()) < before + 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  expect(await unreadable()).toBe(before + 2);
});

test('bytes that are not UTF-8 are not passed on as they are: the answer is valid UTF-8', async () => {
  page = arrayPage(Buffer.concat([Buffer.from(`[{"id":"GB-1","country":"GB",${T},"title":"a`), Buffer.from([0xff, 0xfe]), Buffer.from('"}]')]));
  const a = await get();
  expectKeyedSuccess(a);
  expect(a.body.data[0].title).toBe('a\ufffd\ufffd');
});

test('a store that ignores the request is read in the {items, next_after} form, cleaned as before', async () => {
  page = { body: `{"items":[{"id":"GB-1","country":"GB",${T},"withdrawn":false},{"id":"GB-2","country":"GB",${T},"withdrawn":true}],"next_after":null}`, headers: {} };
  const a = await get();
  expectKeyedSuccess(a);
  expect(a.body).toEqual({ data: [{ id: 'GB-1', country: 'GB', listing_type: 'sale', property_type: 'house' }], next_cursor: null });
});
