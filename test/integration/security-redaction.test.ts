/**
 * Finding 4 of the second security round: a key pasted into the URL, in any spelling, never reaches
 * the log. The rule (gateway/logging.ts) keeps only what is known to be valid for the route and
 * replaces everything else, so the test tries spellings the rule never lists: one character
 * percent-encoded, double-encoded, the project's `plk_` format, with and without the header, in the
 * path and in the query.
 */
import { fixtureListings, sampleIds } from '../fixtures/listings';
import { plkKeyValue, randomKeyValue, send, eventually, startStack, UNLIMITED, type KeySpec, type Stack } from '../kit/gateway-stack';
import { accessLineOf } from '../kit/log-lines';

const KEY: KeySpec = { id: 'redact', value: randomKeyValue('redact'), tier: 'advanced', countries: ['GB'], address: '127.0.0.1', status: 'active', limits: UNLIMITED };
const PLK = plkKeyValue();
const { publishedGb } = sampleIds(fixtureListings());

let stack: Stack;
beforeAll(async () => {
  stack = await startStack({ keys: [KEY] });
}, 60_000);
afterAll(async () => {
  await stack?.stop();
});

/** `value` with its first character percent-encoded, e.g. `it-…` → `%69t-…`. */
const firstEncoded = (value: string): string => `%${value.charCodeAt(0).toString(16)}${value.slice(1)}`;
/** The same, double-encoded: `%2569t-…`. */
const doubleEncoded = (value: string): string => `%25${value.charCodeAt(0).toString(16)}${value.slice(1)}`;

test('finding 4: no spelling of a key in the path or the query reaches the log', async () => {
  const spellings = (v: string): string[] => [v, firstEncoded(v), doubleEncoded(v), encodeURIComponent(encodeURIComponent(v))];
  const paths: string[] = [];
  for (const v of [KEY.value, PLK]) {
    for (const s of spellings(v)) {
      paths.push(`/v1/properties/${s}?country=GB`, `/v1/insights/${s}`, `/v1/properties?country=GB&q=${s}`, `/v1/properties?country=${s}`,
        `/v1/properties?${s}=1`, `/v1/properties?cursor=${s}&country=GB`, `/v1/ping/${s}`, `/${s}`, `/v1/properties?country=GB&limit=${s}`);
    }
  }
  let n = 0;
  for (const path of paths) {
    for (const headers of [{ 'x-api-key': KEY.value }, {}]) {
      const a = await send(stack.url, path, { headers: { ...headers, 'x-request-id': `redact-${n++}` } }).catch((err: Error) => ({ status: 0, error: err.message }));
      expect(a.status).toBeGreaterThanOrEqual(400);
    }
  }
  const answered = () => stack.gateway.output.filter((l) => l.includes('"msg":"answered"'));
  await eventually(`${n} answers logged`, () => answered().length >= n);
  const lines = answered();
  expect(lines.length).toBeGreaterThanOrEqual(n);
  // The tail of each value survives every spelling above: it must be nowhere.
  const leaks = lines.filter((l) => l.includes(KEY.value.slice(4)) || l.includes(PLK.slice(6)));
  expect(leaks).toEqual([]);
});

test('what is valid for the route is logged as sent: a found listing id, the filters', async () => {
  const id = 'redact-valid';
  const a = await send(stack.url, `/v1/properties/${publishedGb}?country=GB`, { headers: { 'x-api-key': KEY.value, 'x-request-id': id } });
  expect(a.status).toBe(200);
  const b = await send(stack.url, '/v1/properties?country=gb&listing_type=sale&property_type=house&limit=5&cursor=abc', { headers: { 'x-api-key': KEY.value, 'x-request-id': `${id}-2` } });
  expect(b.status).toBe(400);
  await eventually('both answers logged', () => accessLineOf(stack.gateway.output, id) && accessLineOf(stack.gateway.output, `${id}-2`));
  const url = (rid: string): string => accessLineOf(stack.gateway.output, rid)!.req.url;
  expect(url(id)).toBe(`/v1/properties/${publishedGb}?country=GB`);
  expect(url(`${id}-2`)).toBe('/v1/properties?country=gb&listing_type=sale&property_type=house&limit=5&cursor=[redacted]');
});
