/**
 * The typed client's retries (part 7 of the interface).
 *
 * Against a real gateway whose data service sits behind a stub that can fail on demand: the
 * gateway's 503 `service_unavailable` and 500 `internal_error` are retried with back-off (never
 * sooner than `Retry-After`) until they pass or the retries run out; a `Retry-After` over the cap
 * is thrown, not waited; 503 `not_configured` (a country with no store) is retried too. One case
 * waits for real. Codes the gateway cannot be made to send (codes added after this client) come
 * from a scripted fetch: an unknown code is a failure of its HTTP status. A service that cannot be
 * reached is retried, then a `ListingsNetworkError`.
 */
import type http from 'node:http';
import { decideRetry, handlingOf, ListingsApiError, ListingsClient, ListingsNetworkError, parseRetryAfter, type ListingsClientOptions } from '../../client/index'; // the sources (bare '../../client' would follow client/package.json to the built dist)
import { fixtureListings } from '../fixtures/listings';
import {
  DEFAULT_TIERS, makeTempDir, randomKeyValue, refusedPort, removeTempDirs, startBackend, startGateway, startStub,
  writeKeysFile, writeListingsFile, writeTempFile, type KeySpec, type Proc, type Stub,
} from '../kit/gateway-stack';
import { conformingFetch } from '../kit/openapi-conformance';
import { stringify } from 'yaml';

const KEY: KeySpec = { id: 'retrier', value: randomKeyValue('retrier'), tier: 'standard', countries: ['GB', 'FR'], address: '127.0.0.1', status: 'active' };

/** Canned failures the stub answers before forwarding to the real data service again. */
interface Failure { status: number; headers?: Record<string, string>; body?: string }
let failures: Failure[] = [];
let backend: Proc;
let upstream: Stub;
let gateway: Proc;
let checked: ReturnType<typeof conformingFetch>;

/** Forwards to the data service, unless a canned failure is queued. */
function failOrForward(req: http.IncomingMessage, res: http.ServerResponse): void {
  const failure = failures.shift();
  if (failure) {
    res.writeHead(failure.status, { 'content-type': 'application/json', ...failure.headers });
    res.end(failure.body ?? '{"error":"stub"}');
    return;
  }
  void fetch(`${backend.url}${req.url}`).then(async (answer) => {
    res.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'application/json' });
    res.end(Buffer.from(await answer.arrayBuffer()));
  }, () => res.destroy());
}

const recordingSleep = (into: number[]) => async (ms: number): Promise<void> => void into.push(ms);
const clientWith = (options: Partial<ListingsClientOptions> = {}): ListingsClient =>
  new ListingsClient({ baseUrl: gateway.url, apiKey: KEY.value, fetch: checked.fetch, ...options });
async function apiError(promise: Promise<unknown>): Promise<ListingsApiError> {
  const err = await promise.then(() => undefined, (e: unknown) => e);
  expect(err).toBeInstanceOf(ListingsApiError);
  return err as ListingsApiError;
}

beforeAll(async () => {
  const dir = makeTempDir();
  backend = await startBackend(writeListingsFile(fixtureListings(), 'json', dir));
  upstream = await startStub(failOrForward);
  // GB is served through the stub; FR has no store (503 not_configured).
  const config = writeTempFile('gateway.yaml', stringify({ tiers: DEFAULT_TIERS, stores: { countries: { GB: upstream.url } } }), dir);
  gateway = await startGateway({ backendUrl: upstream.url, keysFile: writeKeysFile([KEY], dir), gatewayConfig: config, env: { UPSTREAM_TIMEOUT_MS: '2000' } });
  checked = conformingFetch(gateway.url);
});
afterAll(async () => {
  await gateway?.stop();
  await upstream?.close();
  await backend?.stop();
  removeTempDirs();
});
beforeEach(() => {
  failures = [];
});
afterEach(() => {
  expect(checked.problems.splice(0)).toEqual([]);
});

describe('client retries against the real gateway', () => {
  test('service_unavailable twice, then the page: retried after at least Retry-After, backing off', async () => {
    failures = [{ status: 503, headers: { 'retry-after': '1' } }, { status: 503, headers: { 'retry-after': '1' } }];
    const sleeps: number[] = [];
    const before = upstream.requests.length;
    const page = await clientWith({ sleep: recordingSleep(sleeps) }).getPropertiesPage({ country: 'GB', limit: 3 });
    expect(page.data).toHaveLength(3);
    expect(upstream.requests.length - before).toBe(3);
    expect(sleeps).toHaveLength(2);
    for (const ms of sleeps) expect(ms).toBeGreaterThanOrEqual(1000);
  });

  test('internal_error every time: backs off (doubling windows), then throws after maxRetries', async () => {
    failures = Array.from({ length: 5 }, () => ({ status: 500 }));
    const sleeps: number[] = [];
    const err = await apiError(clientWith({ maxRetries: 2, retryBaseDelayMs: 400, sleep: recordingSleep(sleeps) }).getProperty('GB', 'shared-1'));
    expect(err).toMatchObject({ error: 'internal_error', status: 500, attempts: 3, known: true });
    expect(sleeps).toHaveLength(2);
    expect(sleeps[0]).toBeGreaterThanOrEqual(200);
    expect(sleeps[0]).toBeLessThanOrEqual(400);
    expect(sleeps[1]).toBeGreaterThanOrEqual(400);
    expect(sleeps[1]).toBeLessThanOrEqual(800);
    failures = [];
  });

  test('a Retry-After over the cap is not waited: thrown at once with it', async () => {
    failures = [{ status: 503, headers: { 'retry-after': '120' } }];
    const sleeps: number[] = [];
    const err = await apiError(clientWith({ maxRetryWaitSeconds: 60, sleep: recordingSleep(sleeps) }).getPropertiesPage({ country: 'GB' }));
    expect(err).toMatchObject({ error: 'service_unavailable', status: 503, retryAfter: 120, attempts: 1 });
    expect(sleeps).toEqual([]);
  });

  test('not_configured (a country with no store): retried within the cap, thrown at once over it', async () => {
    const atOnce = await apiError(clientWith({ maxRetryWaitSeconds: 1, sleep: recordingSleep([]) }).getPropertiesPage({ country: 'FR' }));
    expect(atOnce).toMatchObject({ error: 'not_configured', status: 503, attempts: 1 });
    const retryAfter = atOnce.retryAfter!;
    expect(retryAfter).toBeGreaterThan(1);
    const sleeps: number[] = [];
    const err = await apiError(clientWith({ maxRetries: 1, maxRetryWaitSeconds: retryAfter, sleep: recordingSleep(sleeps) }).getPropertiesPage({ country: 'FR' }));
    expect(err).toMatchObject({ error: 'not_configured', status: 503, attempts: 2, retryAfter });
    // Retry-After exactly: the cap is Retry-After, and the jitter never takes a wait over the cap.
    expect(sleeps).toEqual([retryAfter * 1000]);
  });

  test('waits for real: one service_unavailable with Retry-After 1, then the listing', async () => {
    failures = [{ status: 503, headers: { 'retry-after': '1' } }];
    const started = Date.now();
    const listing = await clientWith().getProperty('GB', 'shared-1');
    expect(listing).toMatchObject({ id: 'shared-1', country: 'GB' });
    expect(Date.now() - started).toBeGreaterThanOrEqual(1000);
  });

  test('every answer the client got was checked against the document', () => {
    expect(checked.answers).toBeGreaterThanOrEqual(10);
  });
});

describe('codes this client does not know (a scripted service)', () => {
  /** A fetch answering each call with the next scripted answer. */
  function scripted(answers: Array<{ status: number; body: string; headers?: Record<string, string> }>): { fetch: typeof fetch; calls: number } {
    const state = { calls: 0 };
    const f = async (): Promise<Response> => {
      const a = answers[Math.min(state.calls++, answers.length - 1)]!;
      return new Response(a.body, { status: a.status, headers: { 'content-type': 'application/json', ...a.headers } });
    };
    return Object.assign(state, { fetch: f as typeof fetch });
  }
  const client = (f: typeof fetch, sleeps: number[], options: Partial<ListingsClientOptions> = {}): ListingsClient =>
    new ListingsClient({ baseUrl: 'http://127.0.0.1:9', apiKey: 'k', fetch: f, sleep: recordingSleep(sleeps), ...options });

  test('an unknown 5xx code is retried like internal_error, and thrown as it came', async () => {
    const script = scripted([{ status: 502, body: '{"error":"upstream_melted","message":"new code"}' }]);
    const sleeps: number[] = [];
    const err = await apiError(client(script.fetch, sleeps, { maxRetries: 2 }).ping());
    expect(err).toMatchObject({ error: 'upstream_melted', status: 502, message: 'new code', attempts: 3, known: false });
    expect(script.calls).toBe(3);
    expect(sleeps).toHaveLength(2);
  });

  test('an unknown 4xx code is final: thrown at once', async () => {
    const script = scripted([{ status: 409, body: '{"error":"listing_locked","message":"new code"}' }]);
    const sleeps: number[] = [];
    const err = await apiError(client(script.fetch, sleeps).getProperty('GB', 'x'));
    expect(err).toMatchObject({ error: 'listing_locked', status: 409, attempts: 1, known: false });
    expect(script.calls).toBe(1);
    expect(sleeps).toEqual([]);
  });

  test('an unknown 429 code waits its Retry-After, like rate_limited', async () => {
    const script = scripted([
      { status: 429, body: '{"error":"burst_limited","message":"new code"}', headers: { 'retry-after': '2' } },
      { status: 200, body: '{"ip":"127.0.0.1","key_id":"k","tier":"advanced"}' },
    ]);
    const sleeps: number[] = [];
    await expect(client(script.fetch, sleeps).ping()).resolves.toEqual({ ip: '127.0.0.1', key_id: 'k', tier: 'advanced' });
    expect(sleeps).toHaveLength(1);
    expect(sleeps[0]).toBeGreaterThanOrEqual(2000);
    expect(sleeps[0]).toBeLessThanOrEqual(3000);
  });

  test('an error answer without a JSON body is a failure of its status: http_<status>', async () => {
    const script = scripted([{ status: 502, body: '<html>Bad gateway</html>', headers: { 'content-type': 'text/html' } }]);
    const sleeps: number[] = [];
    const err = await apiError(client(script.fetch, sleeps, { maxRetries: 1 }).ping());
    expect(err).toMatchObject({ error: 'http_502', status: 502, message: 'HTTP 502', attempts: 2, known: false });
  });

  test('a 200 that is not JSON is a ListingsNetworkError, not retried', async () => {
    const script = scripted([{ status: 200, body: 'not json' }]);
    const err = await client(script.fetch, []).ping().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ListingsNetworkError);
    expect(script.calls).toBe(1);
  });
});

describe('no answer at all', () => {
  test('a refused connection is retried, then a ListingsNetworkError with the cause', async () => {
    const sleeps: number[] = [];
    const c = new ListingsClient({ baseUrl: `http://127.0.0.1:${await refusedPort()}`, apiKey: 'k', maxRetries: 2, sleep: recordingSleep(sleeps) });
    const err = await c.ping().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ListingsNetworkError);
    expect(err).toMatchObject({ attempts: 3 });
    expect((err as Error).cause).toBeDefined();
    expect(sleeps).toHaveLength(2);
  });

  test('options are checked when the client is made', () => {
    expect(() => new ListingsClient({ baseUrl: 'not a url', apiKey: 'k' })).toThrow();
    expect(() => new ListingsClient({ baseUrl: 'ftp://x', apiKey: 'k' })).toThrow(/http/);
    expect(() => new ListingsClient({ baseUrl: 'http://x', apiKey: '' })).toThrow(/apiKey/);
    expect(() => new ListingsClient({ baseUrl: 'http://x', apiKey: 'k', maxRetries: -1 })).toThrow(/maxRetries/);
  });
});

describe('the retry rule, as a table', () => {
  const limits = { maxRetries: 3, maxRetryWaitSeconds: 60, baseDelayMs: 500, random: () => 1 };
  test.each([
    [429, 'rate_limited', 'wait'], [429, 'quota_exceeded', 'wait'], [429, 'something_new', 'wait'],
    [500, 'internal_error', 'backoff'], [503, 'not_configured', 'backoff'], [503, 'service_unavailable', 'backoff'],
    [502, 'something_new', 'backoff'], [undefined, undefined, 'backoff'],
    [400, 'invalid_cursor', 'final'], [400, 'invalid_parameter', 'final'], [401, 'unauthenticated', 'final'],
    [403, 'country_not_entitled', 'final'], [403, 'ip_not_allowed', 'final'], [403, 'key_paused', 'final'],
    [403, 'upgrade_required', 'final'], [404, 'not_found', 'final'], [405, 'method_not_allowed', 'final'], [418, 'something_new', 'final'],
  ] as const)('%s %s: %s', (status, code, handling) => {
    expect(handlingOf(status, code)).toBe(handling);
  });

  test('waits: Retry-After for 429, at least Retry-After and the back-off for 5xx, nothing over the cap', () => {
    // random() = 1: the longest jitter (1 s) on Retry-After; random() = 0: exactly Retry-After, never sooner.
    expect(decideRetry({ status: 429, code: 'rate_limited', retryAfterSeconds: 7, retriesSoFar: 0 }, limits)).toEqual({ retry: true, waitMs: 8000 });
    expect(decideRetry({ status: 429, code: 'rate_limited', retryAfterSeconds: 7, retriesSoFar: 0 }, { ...limits, random: () => 0 })).toEqual({ retry: true, waitMs: 7000 });
    expect(decideRetry({ status: 429, code: 'rate_limited', retryAfterSeconds: 7, retriesSoFar: 0 }, { ...limits, random: () => 0.25 })).toEqual({ retry: true, waitMs: 7250 });
    expect(decideRetry({ status: 503, code: 'service_unavailable', retryAfterSeconds: 1, retriesSoFar: 2 }, limits)).toEqual({ retry: true, waitMs: 2000 });
    expect(decideRetry({ status: 500, code: 'internal_error', retriesSoFar: 0 }, limits)).toEqual({ retry: true, waitMs: 500 });
    expect(decideRetry({ status: 429, code: 'quota_exceeded', retryAfterSeconds: 61, retriesSoFar: 0 }, limits)).toMatchObject({ retry: false });
    // The jitter never takes a wait over the cap (maxRetryWaitSeconds: "the longest wait the client accepts").
    expect(decideRetry({ status: 429, code: 'rate_limited', retryAfterSeconds: 60, retriesSoFar: 0 }, limits)).toEqual({ retry: true, waitMs: 60_000 });
    expect(decideRetry({ status: 503, code: 'service_unavailable', retryAfterSeconds: 60, retriesSoFar: 0 }, limits)).toEqual({ retry: true, waitMs: 60_000 });
    expect(decideRetry({ status: 429, code: 'rate_limited', retryAfterSeconds: 2, retriesSoFar: 0 }, { ...limits, maxRetryWaitSeconds: 2.5 })).toEqual({ retry: true, waitMs: 2500 });
    expect(decideRetry({ status: 500, code: 'internal_error', retriesSoFar: 3 }, limits)).toMatchObject({ retry: false });
    expect(decideRetry({ status: 500, code: 'internal_error', retriesSoFar: 20 }, { ...limits, maxRetries: 30 })).toEqual({ retry: true, waitMs: 60_000 });
  });

  test('Retry-After as seconds or as an HTTP date', () => {
    expect(parseRetryAfter('17')).toBe(17);
    expect(parseRetryAfter(null)).toBeUndefined();
    expect(parseRetryAfter('soon')).toBeUndefined();
    expect(parseRetryAfter('Wed, 21 Oct 2015 07:28:10 GMT', Date.parse('Wed, 21 Oct 2015 07:28:00 GMT'))).toBe(10);
  });
});
