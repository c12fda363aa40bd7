/**
 * The typed client over a compressed surface: it asks for br and gzip, the gateway compresses its
 * pages, and fetch decodes them; the page walk yields every published listing once, as without
 * compression. The gateway's access lines show what travelled.
 */
import { ListingsClient } from '../../client/index';
import { fixtureListings, publishedListings } from '../fixtures/listings';
import { randomKeyValue, eventually, startStack, type Stack } from '../kit/gateway-stack';
import { accessLines } from '../kit/log-lines';
import { conformingFetch } from '../kit/openapi-conformance';

const LISTINGS = fixtureListings();
const VALUE = randomKeyValue('client-br');
let stack: Stack;

beforeAll(async () => {
  stack = await startStack({ keys: [{ id: 'client-br', value: VALUE, tier: 'standard', countries: ['GB'], address: '127.0.0.1', status: 'active' }], listings: LISTINGS });
});
afterAll(async () => {
  await stack?.stop();
});

test("the client's page walk over compressed pages: asked for, decoded, every listing once", async () => {
  const checked = conformingFetch(stack.url);
  const sent: Array<string | null> = [];
  const received: Array<string | null> = [];
  const recording: typeof fetch = async (input, init) => {
    sent.push(new Headers(init?.headers).get('accept-encoding'));
    const response = await checked.fetch(input, init);
    received.push(response.headers.get('content-encoding'));
    return response;
  };
  const client = new ListingsClient({ baseUrl: stack.url, apiKey: VALUE, fetch: recording });
  const seen: string[] = [];
  for await (const listing of client.listProperties({ country: 'GB', limit: 40 })) seen.push(listing.id);

  const expected = publishedListings(LISTINGS, { country: 'GB' }).map((l) => l.id);
  expect(seen).toHaveLength(expected.length);
  expect([...seen].sort()).toEqual([...expected].sort());
  expect(checked.problems).toEqual([]);
  const pages = Math.ceil(expected.length / 40);
  expect(sent).toEqual(Array(pages).fill('br, gzip'));
  // Equal weights: the server's preference (br before gzip, by measurement: gateway/compression/codecs.ts).
  expect(received).toEqual(Array(pages).fill('br'));

  await eventually('every page logged', () => accessLines(stack.gateway.output).filter((l) => l.key_id === 'client-br').length >= pages);
  const lines = accessLines(stack.gateway.output).filter((l) => l.key_id === 'client-br');
  expect(lines).toHaveLength(pages);
  for (const line of lines) {
    expect(line.encoding).toBe('br');
    expect(line.sent_bytes).toBeLessThan(line.bytes! / 2);
  }
});
