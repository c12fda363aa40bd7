/**
 * The typed client (client/) against a real gateway and data service: ping, one listing, every
 * listing of a filter across pages, and the service's refusals as typed `ListingsApiError`s with
 * the right code, status, extra fields and `Retry-After`. Small limits exercise part 7's waiting
 * rule (the wait is recorded, not slept, so the test does not sit out a UTC minute). Every answer
 * the client gets is checked against the OpenAPI document too.
 */
import { RETRY_AFTER_JITTER_MS } from '../../client/retry-policy';
import { ListingsApiError, ListingsClient, type ListFilters, type ListingsClientOptions } from '../../client/index'; // the sources (bare '../../client' would follow client/package.json to the built dist)
import { fixtureListings, publishedListings, sampleIds } from '../fixtures/listings';
import { awayFromMinuteEdge, randomKeyValue, startStack, type KeySpec, type Stack } from '../kit/gateway-stack';
import { conformingFetch } from '../kit/openapi-conformance';

const LISTINGS = fixtureListings();
const IDS = sampleIds(LISTINGS);

const key = (id: string, over: Partial<KeySpec> = {}): KeySpec => ({
  id, value: randomKeyValue(id), tier: 'standard', countries: ['GB', 'FR', 'ES'], address: '127.0.0.1', status: 'active', ...over,
});
const KEYS = [
  key('std'),
  key('paused', { status: 'paused', pause_reason: 'payment_dispute' }),
  key('revoked', { status: 'revoked' }),
  key('elsewhere', { address: '203.0.113.7' }),
  key('per-minute-2', { limits: { per_minute: 2 } }),
  key('per-minute-1', { limits: { per_minute: 1 } }),
  key('per-day-1', { limits: { per_day: 1 } }),
];

let stack: Stack;
let checked: ReturnType<typeof conformingFetch>;

const clientFor = (keyId: string, options: Partial<ListingsClientOptions> = {}): ListingsClient =>
  new ListingsClient({ baseUrl: stack.url, apiKey: stack.key(keyId).value, fetch: checked.fetch, ...options });

/** The ListingsApiError `promise` rejects with (fails the test if it resolves or throws anything else). */
async function apiError(promise: Promise<unknown>): Promise<ListingsApiError> {
  const err = await promise.then(() => undefined, (e: unknown) => e);
  expect(err).toBeInstanceOf(ListingsApiError);
  return err as ListingsApiError;
}

beforeAll(async () => {
  stack = await startStack({ keys: KEYS, listings: LISTINGS });
  checked = conformingFetch(stack.url);
});
afterAll(async () => {
  await stack?.stop();
});
afterEach(() => {
  expect(checked.problems.splice(0)).toEqual([]);
});

describe('typed client against the real gateway', () => {
  test('ping() tells the key, its tier and the address the service sees', async () => {
    await expect(clientFor('std').ping()).resolves.toEqual({ ip: '127.0.0.1', key_id: 'std', tier: 'standard' });
  });

  test('listProperties() walks every page and yields each published listing once, in order', async () => {
    const expected = publishedListings(LISTINGS, { country: 'GB' });
    const client = clientFor('std');
    const seen = [];
    for await (const listing of client.listProperties({ country: 'gb', limit: 17 })) seen.push(listing);
    expect(seen).toHaveLength(expected.length);
    expect(new Set(seen.map((l) => l.id)).size).toBe(expected.length);
    expect([...seen].sort((a, b) => (a.id < b.id ? -1 : 1))).toEqual([...expected].sort((a, b) => (a.id < b.id ? -1 : 1)));
    // Stable order: a second walk gives the same sequence.
    const again = [];
    for await (const listing of client.listProperties({ country: 'GB', limit: 100 })) again.push(listing.id);
    expect(again).toEqual(seen.map((l) => l.id));
  });

  test('pages() gives the pages themselves, the last with next_cursor null', async () => {
    const pages = [];
    for await (const page of clientFor('std').listProperties({ country: 'GB', listing_type: 'sale', property_type: 'house', limit: 5 }).pages()) pages.push(page);
    const expected = publishedListings(LISTINGS, { country: 'GB', listing_type: 'sale', property_type: 'house' });
    expect(pages.length).toBe(Math.ceil(expected.length / 5));
    expect(pages.flatMap((p) => p.data).map((l) => l.id).sort()).toEqual(expected.map((l) => l.id).sort());
    for (const page of pages.slice(0, -1)) expect(typeof page.next_cursor).toBe('string');
    expect(pages.at(-1)?.next_cursor).toBeNull();
    for (const l of pages.flatMap((p) => p.data)) expect([l.listing_type, l.property_type]).toEqual(['sale', 'house']);
  });

  test('an entitled country without listings is one empty page', async () => {
    const pages = [];
    for await (const page of clientFor('std').listProperties({ country: 'ES' }).pages()) pages.push(page);
    expect(pages).toEqual([{ data: [], next_cursor: null }]);
  });

  test('getProperty() answers the listing; a withdrawn one is not_found, at once', async () => {
    const client = clientFor('std');
    const listing = await client.getProperty('gb', IDS.publishedGb);
    expect(listing).toEqual(publishedListings(LISTINGS, { country: 'GB' }).find((l) => l.id === IDS.publishedGb));
    const err = await apiError(client.getProperty('GB', IDS.withdrawnGb));
    expect(err).toMatchObject({ error: 'not_found', status: 404, attempts: 1, known: true });
    expect(err.requestId).toEqual(expect.stringMatching(/\S/));
    // Ids with the unusual characters of the alphabet travel intact.
    await expect(client.getProperty('GB', '~tilde')).resolves.toMatchObject({ id: '~tilde', country: 'GB' });
  });

  test.each<[string, string, ListFilters, string, number, Record<string, string>]>([
    ['an unsubscribed country', 'std', { country: 'DE' }, 'country_not_entitled', 403, {}],
    ['a limit out of range', 'std', { country: 'GB', limit: 1000 }, 'invalid_parameter', 400, { parameter: 'limit' }],
    ['a revoked key', 'revoked', { country: 'GB' }, 'unauthenticated', 401, {}],
    ['a paused key', 'paused', { country: 'GB' }, 'key_paused', 403, {}],
    ['another address', 'elsewhere', { country: 'GB' }, 'ip_not_allowed', 403, { ip: '127.0.0.1' }],
  ])('%s: a typed error (key %s, %j): %s %i, never retried', async (_case, keyId, filters, code, status, extras) => {
    const sleeps: number[] = [];
    const err = await apiError(clientFor(keyId, { sleep: async (ms) => void sleeps.push(ms) }).getPropertiesPage(filters));
    expect(err).toMatchObject({ error: code, status, attempts: 1, ...extras });
    expect(err.message.length).toBeGreaterThan(0);
    expect(err.message).not.toContain(stack.key(keyId).value);
    expect(sleeps).toEqual([]);
  });

  test('a cursor used with other filters is invalid_cursor', async () => {
    const client = clientFor('std');
    const first = await client.getPropertiesPage({ country: 'GB', listing_type: 'sale', limit: 3 });
    expect(first.next_cursor).toEqual(expect.any(String));
    const err = await apiError(client.getPropertiesPage({ country: 'GB', listing_type: 'rent', limit: 3 }, first.next_cursor!));
    expect(err).toMatchObject({ error: 'invalid_cursor', status: 400, attempts: 1 });
  });

  test('rate_limited: waits exactly Retry-After before each retry, then gives up with the last answer', async () => {
    await awayFromMinuteEdge(8000);
    const sleeps: number[] = [];
    const client = clientFor('per-minute-2', { maxRetries: 2, maxRetryWaitSeconds: 60, sleep: async (ms) => void sleeps.push(ms) });
    await client.ping();
    await client.ping();
    const err = await apiError(client.ping());
    expect(err).toMatchObject({ error: 'rate_limited', status: 429, attempts: 3 });
    expect(err.retryAfter).toBeGreaterThanOrEqual(1);
    expect(err.retryAfter).toBeLessThanOrEqual(60);
    // Two waits, each the Retry-After of the answer before it (the same minute: 1 s apart at most),
    // plus the client's jitter (0 .. RETRY_AFTER_JITTER_MS, never earlier than Retry-After).
    expect(sleeps).toHaveLength(2);
    for (const ms of sleeps) {
      expect(ms - err.retryAfter! * 1000).toBeGreaterThanOrEqual(-1000);
      expect(ms - err.retryAfter! * 1000).toBeLessThanOrEqual(1000 + RETRY_AFTER_JITTER_MS);
    }
  });

  test('rate_limited over the caller\'s cap is thrown at once, not waited', async () => {
    await awayFromMinuteEdge(8000);
    const sleeps: number[] = [];
    const client = clientFor('per-minute-1', { maxRetryWaitSeconds: 0, sleep: async (ms) => void sleeps.push(ms) });
    await client.ping();
    const before = Date.now();
    const err = await apiError(client.ping());
    expect(err).toMatchObject({ error: 'rate_limited', status: 429, attempts: 1 });
    expect(err.retryAfter).toBeGreaterThanOrEqual(1);
    expect(sleeps).toEqual([]);
    expect(Date.now() - before).toBeLessThan(2000);
  });

  test('quota_exceeded until tomorrow is over any sensible cap: thrown at once with its Retry-After', async () => {
    const sleeps: number[] = [];
    const client = clientFor('per-day-1', { maxRetries: 5, maxRetryWaitSeconds: 60, sleep: async (ms) => void sleeps.push(ms) });
    await client.ping();
    const err = await apiError(client.listProperties({ country: 'GB' }).pages().next());
    expect(err).toMatchObject({ error: 'quota_exceeded', status: 429, attempts: 1 });
    expect(err.retryAfter).toBeGreaterThan(60);
    expect(err.retryAfter).toBeLessThanOrEqual(86_400);
    expect(sleeps).toEqual([]);
  });

  test('every answer the client got was checked against the document', () => {
    expect(checked.answers).toBeGreaterThan(30);
  });
});
