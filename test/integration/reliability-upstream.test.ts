/**
 * The data service failing under the gateway. How each failure is answered (503 or 500, opaque) is
 * held by gateway-upstream.test.ts; this suite holds what that one cannot see, with a stub that
 * counts its connections and sees when the gateway gives up on a request:
 *
 * - after every kind of failure (silent, too slow, reset before or during the body, 500 with a
 *   stack trace, not JSON) no upstream request is left pending and the gateway's connections to the
 *   data service stay bounded by its concurrency: nothing leaks;
 * - a caller that goes away aborts its upstream request at once, and the connections return to
 *   their baseline;
 * - a data service that refuses connections and then comes back is used again, within seconds;
 * - the gateway stays up throughout.
 */
import http from 'node:http';
import {
  UNLIMITED,
  allowance,
  budget,
  eventually,
  expectError,
  expectKeyedSuccess,
  randomKeyValue,
  send,
  startStack,
  type Answer,
  type ErrorCode,
  type KeySpec,
  type Proc,
  type Stack,
} from '../kit/gateway-stack';
import { startStubUpstream, UPSTREAM_SECRET_MARKERS, type StubUpstream, type UpstreamMode } from '../kit/stub-upstream';

/** 800 ms on an idle machine, scaled by the load measured in this run: a healthy call must not time out. */
const UPSTREAM_TIMEOUT_MS = budget(800);
const CONCURRENCY = 10;

const KEYS: KeySpec[] = [
  {
    id: 'up',
    value: randomKeyValue('up'),
    tier: 'standard',
    countries: ['GB', 'FR'],
    address: '127.0.0.1',
    status: 'active',
    limits: UNLIMITED,
  },
];

let stub: StubUpstream; // behind `quick`
let lone: StubUpstream; // behind `patient`, so each stub counts one gateway's connections
let stack: Stack;
let quick: Proc; // UPSTREAM_TIMEOUT_MS (800 ms idle)
let patient: Proc; // UPSTREAM_TIMEOUT_MS=30000: only the caller's abort can end its upstream call

beforeAll(async () => {
  [stub, lone] = await Promise.all([startStubUpstream(), startStubUpstream()]);
  stack = await startStack({
    keys: KEYS,
    backendUrl: stub.url,
    gateways: [{ UPSTREAM_TIMEOUT_MS: String(UPSTREAM_TIMEOUT_MS) }, { UPSTREAM_TIMEOUT_MS: '30000', BACKEND_URL: lone.url }],
  });
  [quick, patient] = stack.gateways as [Proc, Proc];
});
afterAll(async () => {
  await stack?.stop();
  await stub?.close();
  await lone?.close();
});
beforeEach(() => {
  stub.mode = 'ok';
  lone.mode = 'ok';
});

let sequence = 0;
const requestId = (label: string): string => `rel-up-${label}-${++sequence}`;
const PATHS = ['/v1/properties?country=GB&limit=3', '/v1/properties/abc-1?country=GB'];

const get = (gateway: Proc, path: string, id: string): Promise<Answer> =>
  send(gateway.url, path, { headers: { 'x-api-key': stack.key('up').value, 'x-request-id': id }, timeoutMs: 15_000 });

/** `n` concurrent requests alternating between a page and an item; returns the answers and their request ids. */
async function batch(gateway: Proc, label: string, n = CONCURRENCY): Promise<Array<{ id: string; answer: Answer }>> {
  return Promise.all(
    Array.from({ length: n }, async (_, i) => {
      const id = requestId(label);
      return { id, answer: await get(gateway, PATHS[i % 2]!, id) };
    }),
  );
}

/** Nothing of the data service in the answer: no marker text, no port, no upstream header. */
function expectNothingOfUpstream(a: Answer): void {
  for (const marker of [...UPSTREAM_SECRET_MARKERS, 'ECONNREFUSED', 'html', String(stub.port)]) expect(a.text).not.toContain(marker);
  for (const [name, value] of Object.entries(a.headers)) {
    for (const marker of [...UPSTREAM_SECRET_MARKERS, String(stub.port)]) expect(`${name}: ${String(value)}`).not.toContain(marker);
  }
  expect(a.headers.server).toBeUndefined();
}

const settled = (): boolean => stub.requests.every((r) => r.answered || r.aborted);

describe('failures of the data service leave nothing behind', () => {
  const FAILURES: Array<[UpstreamMode, ErrorCode]> = [
    ['hang', 'service_unavailable'],
    ['slow', 'service_unavailable'],
    ['reset', 'service_unavailable'],
    ['reset-mid-body', 'internal_error'],
    ['500-stack', 'internal_error'],
    ['non-json', 'internal_error'],
  ];

  test.each(FAILURES)('%s: every answer is %s, no upstream request left pending, connections bounded', async (mode, code) => {
    stub.slowMs = UPSTREAM_TIMEOUT_MS * 3;
    const warmStarted = Date.now();
    for (const { answer } of await batch(quick, 'warm')) expectKeyedSuccess(answer);
    // The same batch against a healthy data service, measured now: the baseline of this machine's load.
    const warmMs = Date.now() - warmStarted;

    stub.mode = mode;
    const started = Date.now();
    const failed = await batch(quick, mode);
    for (const { answer } of failed) {
      expectError(answer, code);
      expectNothingOfUpstream(answer);
    }
    // No caller waited much longer than the upstream timeout (slack from the load and the baseline).
    expect(Date.now() - started).toBeLessThan(UPSTREAM_TIMEOUT_MS + allowance(4000, warmMs));
    // Each failed call reached the data service once, and the gateway has let go of every one.
    for (const { id } of failed) expect(stub.byRequestId(id)).toHaveLength(1);
    await stub.waitFor(settled, 3000, 'every upstream request answered or abandoned');
    if (mode === 'hang' || mode === 'slow') for (const { id } of failed) expect(stub.byRequestId(id)[0]!.aborted).toBe(true);

    stub.mode = 'ok';
    for (const { answer } of await batch(quick, `after-${mode}`)) expectKeyedSuccess(answer);
    await stub.waitFor(settled, 3000, 'every upstream request answered');
    // Idle keep-alive connections stay pooled; nothing beyond what the concurrency needs.
    expect(stub.openSockets()).toBeLessThanOrEqual(CONCURRENCY);
  });

  test('after every kind of failure, still bounded by the concurrency and still answering', async () => {
    for (const { answer } of await batch(quick, 'final', CONCURRENCY)) expectKeyedSuccess(answer);
    expect(stub.openSockets()).toBeLessThanOrEqual(CONCURRENCY);
    expect(quick.child.exitCode).toBeNull();
  });
});

describe('callers that go away', () => {
  /** Starts a request and resets the connection once the data service has received it. */
  async function abandon(path: string, id: string): Promise<void> {
    const req = http.request({
      host: '127.0.0.1',
      port: patient.port,
      path,
      headers: { 'x-api-key': stack.key('up').value, 'x-request-id': id },
      agent: false,
    });
    req.on('error', () => undefined);
    req.on('response', () => {
      throw new Error(`an answer came for ${id}: the data service was meant to hang`);
    });
    req.end();
    await lone.waitFor(() => lone.byRequestId(id).length === 1, 5000, `upstream request ${id}`);
    req.destroy();
  }

  test('20 callers abort while the data service hangs: every upstream request is aborted at once, connections stay the pool\'s', async () => {
    const ABANDONED = 20;
    for (const { answer } of await batch(patient, 'abort-warm', 4)) expectKeyedSuccess(answer);

    lone.mode = 'hang';
    const ids = Array.from({ length: ABANDONED }, () => requestId('abort'));
    await Promise.all(ids.map((id, i) => abandon(PATHS[i % 2]!, id)));
    const abortedAt = Date.now();
    // UPSTREAM_TIMEOUT_MS is 30 s here: only the callers' going away can end these calls.
    await lone.waitFor(() => ids.every((id) => lone.byRequestId(id)[0]!.aborted), 5000, 'every upstream request aborted');
    // Well before UPSTREAM_TIMEOUT_MS (30 s): the callers' going away ended them.
    expect(Date.now() - abortedAt).toBeLessThan(Math.min(budget(5000), 20_000));
    expect(lone.requests.every((r) => r.answered || r.aborted)).toBe(true);

    // The connections left are the pool's, bounded by the concurrency it has seen, and reusable:
    // the same concurrency of ordinary requests needs no new connection. (undici replaces a
    // connection it destroys for an aborted call with a fresh idle one.)
    await new Promise((r) => setTimeout(r, 200));
    expect(lone.openSockets()).toBeLessThanOrEqual(ABANDONED);
    lone.mode = 'ok';
    const accepted = lone.acceptedSockets;
    const open = lone.openSockets();
    for (const { answer } of await batch(patient, 'abort-after', open)) expectKeyedSuccess(answer);
    expect(lone.acceptedSockets - accepted).toBeLessThanOrEqual(ABANDONED - open);
    expect(lone.openSockets()).toBeLessThanOrEqual(ABANDONED);
    expect(patient.child.exitCode).toBeNull();
    // An abandoned request is not an error of the gateway.
    expect(patient.output.filter((l) => l.includes('unexpected error'))).toEqual([]);
  });
});

describe('a data service that goes down and comes back', () => {
  test('refused connections: 503 service_unavailable with Retry-After, then served again within seconds', async () => {
    for (const { answer } of await batch(quick, 'down-warm', 4)) expectKeyedSuccess(answer);
    await stub.stopListening();
    try {
      for (const { answer } of await batch(quick, 'down')) {
        expectError(answer, 'service_unavailable');
        expectNothingOfUpstream(answer);
      }
    } finally {
      await stub.listenAgain();
    }
    const answer = await eventually('served again', async () => {
      const a = await get(quick, PATHS[0]!, requestId('back'));
      return a.status === 200 && a;
    }, { timeoutMs: 5000, intervalMs: 100 });
    expectKeyedSuccess(answer);
    for (const { answer: a } of await batch(quick, 'back-batch')) expectKeyedSuccess(a);
  });

  test('the gateways never exited and logged no unexpected error', () => {
    for (const g of [quick, patient]) {
      expect(g.child.exitCode).toBeNull();
      expect(g.output.filter((l) => l.includes('unexpected error'))).toEqual([]);
    }
  });
});
