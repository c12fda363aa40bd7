/**
 * Traces (docs/observing.md): a gateway and a data service exporting to an OTLP/HTTP collector the
 * test runs, with the Redis key store so the key look-up leaves the process. Exports use the
 * default encoding, http/protobuf (no OTEL_EXPORTER_OTLP_PROTOCOL, as operators run it), and one
 * gateway uses http/json; each collector takes only its encoding's Content-Type.
 * One trace holds the gateway's server span, its children (key look-up, limit check, upstream call)
 * and the data service's span, whichever encoding the gateway exports in; a caller's traceparent is
 * continued; a ratio-0 sampler records nothing; no key value or hash is in any attribute; a hanging
 * or stopped collector does not slow requests, and the dropped spans are counted in /metrics.
 */
import { createHash, randomBytes } from 'node:crypto';
import Redis from 'ioredis';
import { fixtureListings } from '../fixtures/listings';
import { stringify } from 'yaml';
import {
  DEFAULT_TIERS, getWithKey, randomKeyValue, sha256Hex, eventually, sleep, startGateway, startStack, startStub, writeKeysFile, writeListingsFile, writeTempFile, type Proc, type Stack,
} from '../kit/gateway-stack';
import { accessLines, announcedUrl } from '../kit/log-lines';
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from '../kit/otlp-receiver';
import { startProcess } from '../kit/processes';
import { startRedis, type RedisServer } from '../kit/redis-server';
import { keyProvisioner } from '../kit/redis-keys';

const PAGE = '/v1/properties?country=GB&limit=3';
const SERVER = 2;
const CLIENT = 3;

/** The data service's and the main gateway's collector: http/protobuf, the default. */
let receiver: OtlpReceiver;
/** The collector of the gateway started with OTEL_EXPORTER_OTLP_PROTOCOL=http/json. */
let jsonReceiver: OtlpReceiver;
let redisServer: RedisServer;
let redis: Redis;
let backend: Proc | undefined;
let stack: Stack;
let provision: (id: string) => Promise<string>;
const keyValues: string[] = [];

const otel = (collector: OtlpReceiver, extra: Record<string, string> = {}): Record<string, string> => ({
  OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
  // OTEL_EXPORTER_OTLP_PROTOCOL unset: http/protobuf, unless the collector takes JSON.
  ...(collector.protocol === 'http/json' ? { OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' } : {}),
  OTEL_BSP_SCHEDULE_DELAY: '50',
  ...extra,
});
const redisEnv = (): Record<string, string> => ({ REDIS_URL: redisServer.url, KEY_STORE: 'redis' });

async function until<T>(find: () => T | undefined, what: string, timeoutMs = 15_000): Promise<T> {
  try {
    return (await eventually(what, () => { const found = find(); return found === false ? undefined : found; }, { timeoutMs, intervalMs: 25 })) as T;
  } catch (err) {
    throw new Error(`${(err as Error).message}${refusals()}`);
  }
}

/** What the collectors refused (an export in the wrong encoding, say), for a failure's message. */
const refusals = (): string =>
  [receiver, jsonReceiver].flatMap((c) => (c?.refused ?? []).map((why) => `\n  ${c.protocol} collector refused: ${why}`)).join('');

const gatewaySpan = (traceId: string): ReceivedSpan | undefined =>
  receiver.spans.find((s) => s.traceId === traceId && s.service === 'listings-gateway' && s.kind === SERVER);

beforeAll(async () => {
  [receiver, jsonReceiver] = await Promise.all([startOtlpReceiver(), startOtlpReceiver('http/json')]);
  redisServer = await startRedis();
  redis = new Redis(redisServer.url);
  const b = await startProcess('backend-mock/main.js', { BACKEND_PORT: '0', LISTINGS_FILE: writeListingsFile(fixtureListings()), LOG_LEVEL: 'info', ...otel(receiver) });
  backend = Object.assign(b, { closed: new Promise<void>((resolve) => b.child.once('close', () => resolve())) });
  stack = await startStack({ keys: [], backendUrl: backend.url, gateways: [{ ...redisEnv(), ...otel(receiver) }] });
  const create = keyProvisioner(redis, stack.gatewayConfig, (v) => keyValues.push(v));
  provision = (id) => create(id);
}, 60_000);

afterAll(async () => {
  await stack?.stop();
  await backend?.stop();
  redis?.disconnect();
  await redisServer?.stop();
  await receiver?.close();
  await jsonReceiver?.close();
});

/**
 * Checks one request's trace: the gateway's spans at `collector`, the data service's at `receiver`
 * (http/protobuf), joined by the traceparent of the gateway's upstream call.
 */
async function expectOneTrace(gateway: Proc, collector: OtlpReceiver, keyId: string): Promise<void> {
  const value = await provision(keyId);
  const answer = await getWithKey(gateway.url, PAGE, value);
  expect(answer.status).toBe(200);
  const server = await until(() => collector.spans.find((s) => s.kind === SERVER && s.service === 'listings-gateway' && s.attributes['listings.key_id'] === keyId), 'the server span');
  const inTrace = (): ReceivedSpan[] => collector.spans.filter((s) => s.traceId === server.traceId);
  const call = await until(() => inTrace().find((s) => s.service === 'listings-gateway' && s.kind === CLIENT && s.name === 'GET'), 'the upstream call span');
  const data = await until(() => receiver.spans.find((s) => s.traceId === server.traceId && s.service === 'listings-data-service'), 'the data service span');

  expect(server).toMatchObject({ name: 'GET /v1/properties', parentSpanId: '' });
  expect(server.attributes).toMatchObject({ 'http.request.method': 'GET', 'http.route': '/v1/properties', 'http.response.status_code': 200, 'listings.key_id': keyId });
  expect(server.attributes['listings.error']).toBeUndefined();
  const lookup = inTrace().find((s) => s.name === 'keys.lookup');
  expect(lookup).toMatchObject({ parentSpanId: server.spanId, kind: CLIENT, attributes: { 'db.system.name': 'redis' } });
  expect(inTrace().find((s) => s.name === 'limits.check')).toMatchObject({ parentSpanId: server.spanId });
  expect(call.parentSpanId).toBe(server.spanId);
  expect(call.attributes).toMatchObject({
    'http.request.method': 'GET', 'http.response.status_code': 200, 'server.address': '127.0.0.1', 'server.port': Number(new URL(backend!.url).port),
    'url.full': `${backend!.url}/internal/v1/listings`, // without the query
  });
  // The data service continued the trace from the traceparent naming the gateway's client span.
  expect(data).toMatchObject({ kind: SERVER, parentSpanId: call.spanId, name: 'GET /internal/v1/listings' });
  expect(data.attributes).toMatchObject({ 'http.response.status_code': 200 });

  // The access line names the recorded span (lines are written in batches, up to 100 ms later: waited for).
  const line = await until(() => accessLines(gateway.output).find((l) => l.req.id === answer.headers['x-request-id']), 'the access line');
  expect(line).toMatchObject({ trace_id: server.traceId, span_id: server.spanId });
  expect(collector.refused).toEqual([]);
  expect(receiver.refused).toEqual([]);
}

test('one trace exported in http/protobuf, the default: the gateway server span, its key look-up, limit check and upstream call, and the data service span under the call', async () => {
  await expectOneTrace(stack.gateway, receiver, 'traced');
});

test('the same trace from a gateway exporting in http/json, its data service span still in protobuf', async () => {
  const gateway = await stack.startGateway({ ...redisEnv(), ...otel(jsonReceiver) });
  await expectOneTrace(gateway, jsonReceiver, 'traced-json');
});

test("a caller's traceparent is continued (same trace id, the caller's span as parent); a refusal carries listings.error", async () => {
  const value = await provision('continued');
  const traceId = randomBytes(16).toString('hex');
  const callerSpan = randomBytes(8).toString('hex');
  expect((await getWithKey(stack.url, '/v1/ping', value, { headers: { traceparent: `00-${traceId}-${callerSpan}-01`, tracestate: 'caller=1' } })).status).toBe(200);
  const server = await until(() => gatewaySpan(traceId), 'the continued server span');
  expect(server).toMatchObject({ parentSpanId: callerSpan, name: 'GET /v1/ping' });

  const refusedTrace = randomBytes(16).toString('hex');
  const refused = await getWithKey(stack.url, PAGE, `${value}x`, { headers: { traceparent: `00-${refusedTrace}-${randomBytes(8).toString('hex')}-01` } });
  expect(refused.status).toBe(401);
  const refusal = await until(() => gatewaySpan(refusedTrace), 'the refused request span');
  expect(refusal.attributes).toMatchObject({ 'http.response.status_code': 401, 'listings.error': 'unauthenticated' });
});

test('parentbased_traceidratio with ratio 0 records nothing, at the gateway or the data service', async () => {
  const quiet = await stack.startGateway({ ...redisEnv(), ...otel(receiver, { OTEL_SERVICE_NAME: 'gateway-ratio-0', OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0' }) });
  const value = await provision('ratio-0');
  for (let i = 0; i < 10; i++) expect((await getWithKey(quiet.url, PAGE, value)).status).toBe(200);
  // A request to the recording gateway afterwards, seen with its data service span: the batches of
  // the earlier requests had their chance to arrive.
  const marker = randomBytes(16).toString('hex');
  expect((await getWithKey(stack.url, PAGE, value, { headers: { traceparent: `00-${marker}-${randomBytes(8).toString('hex')}-01` } })).status).toBe(200);
  await until(() => receiver.spans.find((s) => s.traceId === marker && s.service === 'listings-data-service'), 'the marker trace');
  await sleep(300);
  expect(receiver.spans.filter((s) => s.service === 'gateway-ratio-0')).toEqual([]);
  // (The http/json gateway's spans are at its own collector, its data service spans here.)
  const gatewayTraces = new Set([...receiver.spans, ...jsonReceiver.spans].filter((s) => s.service === 'listings-gateway').map((s) => s.traceId));
  expect(receiver.spans.filter((s) => s.service === 'listings-data-service' && !gatewayTraces.has(s.traceId))).toEqual([]);
  expect(accessLines(quiet.output).filter((l) => 'trace_id' in l)).toEqual([]);
});

test("the insights service gets a traceparent naming the gateway's client span, and what of the caller's tracestate is continued", async () => {
  const insights = await startStub((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{"series":[]}'));
  const value = randomKeyValue('insights');
  keyValues.push(value);
  const gateway = await startGateway({
    backendUrl: backend!.url,
    keysFile: writeKeysFile([{ id: 'insights-adv', value, tier: 'advanced', countries: ['GB'], address: '127.0.0.1', status: 'active' }]),
    gatewayConfig: writeTempFile('gateway.yaml', stringify({ tiers: DEFAULT_TIERS, insights: { upstream: insights.url } })),
    env: otel(receiver),
  });
  try {
    const traceId = randomBytes(16).toString('hex');
    const answer = await getWithKey(gateway.url, '/v1/insights/prices?region=GB', value, { headers: { traceparent: `00-${traceId}-${randomBytes(8).toString('hex')}-01`, tracestate: 'caller=1,ot=rv:0123456789abcd' } });
    expect(answer.status).toBe(200);
    const sent = insights.requests[0]!.headers;
    const call = await until(() => receiver.spans.find((s) => s.traceId === traceId && s.kind === CLIENT), 'the insights call span');
    expect(sent.traceparent).toBe(`00-${traceId}-${call.spanId}-01`);
    expect(sent.tracestate).toBe('ot=rv:0123456789abcd');
    expect(call.attributes['server.port']).toBe(insights.port);
    const server = await until(() => gatewaySpan(traceId), 'the insights server span');
    expect(server).toMatchObject({ name: 'GET /v1/insights/{path}' });
    expect(call.parentSpanId).toBe(server.spanId);

    // A trace context that carries the key is not continued, so the key is neither forwarded nor exported.
    const keyTrace = randomBytes(16).toString('hex');
    const carried = await getWithKey(gateway.url, '/v1/insights/prices', value, { headers: { traceparent: `00-${keyTrace}-${randomBytes(8).toString('hex')}-01`, tracestate: `k=${value}` } });
    expect(carried.status).toBe(200);
    const forwarded = insights.requests[1]!.headers;
    expect(forwarded.tracestate).toBeUndefined();
    expect(forwarded.traceparent).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
    expect(forwarded.traceparent).not.toContain(keyTrace);
  } finally {
    await gateway.stop();
    await insights.close();
  }
});

test("of a caller's tracestate only OpenTelemetry's th and rv go on: a key's base64 or SHA-256 hidden in it reaches neither the collector nor the data service", async () => {
  const value = await provision('tracestate');
  // As a tracestate value may carry them: base64 without its padding ('=' is not allowed there).
  const hidden = [
    Buffer.from(value).toString('base64').replace(/=+$/, ''), Buffer.from(value).toString('base64url'), Buffer.from(value).toString('hex'),
    sha256Hex(value), createHash('sha256').update(value).digest('base64').replace(/=+$/, ''),
  ];
  const traceId = randomBytes(16).toString('hex');
  const tracestate = `b64=${hidden[0]},b64u=${hidden[1]},acme@hex=${hidden[2]},sha=${hidden[3]},ot=th:0;rv:0123456789abcd;x:${hidden[3]!.slice(0, 40)},sha64=${hidden[4]}`;
  expect((await getWithKey(stack.url, PAGE, value, { headers: { traceparent: `00-${traceId}-${randomBytes(8).toString('hex')}-01`, tracestate } })).status).toBe(200);
  const server = await until(() => gatewaySpan(traceId), 'the server span');
  const data = await until(() => receiver.spans.find((s) => s.traceId === traceId && s.service === 'listings-data-service'), 'the data service span');
  expect(server.traceState).toBe('ot=th:0;rv:0123456789abcd');
  expect(data.traceState).toBe('ot=th:0;rv:0123456789abcd');
  for (const h of [...hidden, hidden[3]!.slice(0, 40)]) {
    const seen = receiver.bodies.filter((b) => b.includes(h)).length;
    expect({ h, seen }).toEqual({ h, seen: 0 });
  }
});

test('no attribute of any span carries a key value or its hash, in either encoding', async () => {
  expect(receiver.spans.length).toBeGreaterThan(5);
  expect(jsonReceiver.spans.length).toBeGreaterThan(3);
  const text = JSON.stringify([...receiver.spans, ...jsonReceiver.spans]);
  for (const value of keyValues) {
    expect(text).not.toContain(value);
    expect(text).not.toContain(sha256Hex(value));
  }
});

describe('a collector that hangs, then is gone', () => {
  let collector: OtlpReceiver;
  let traced: Proc;
  let plain: Proc;
  let opsUrl: string;
  beforeAll(async () => {
    collector = await startOtlpReceiver();
    collector.mode = 'hang';
    const bounded = { OTEL_EXPORTER_OTLP_TIMEOUT: '200', OTEL_BSP_MAX_QUEUE_SIZE: '16', OTEL_BSP_MAX_EXPORT_BATCH_SIZE: '8', OTEL_BSP_SCHEDULE_DELAY: '20' };
    [traced, plain] = await Promise.all([stack.startGateway({ ...redisEnv(), ...otel(collector, bounded), OPS_PORT: '0' }), stack.startGateway(redisEnv())]);
    opsUrl = await announcedUrl(traced, 'ops listening');
  }, 30_000);
  afterAll(async () => {
    await collector?.close();
  });

  const dropped = async (): Promise<number> => {
    const text = await (await fetch(`${opsUrl}/metrics`)).text();
    return [...text.matchAll(/^gateway_spans_dropped_total\{reason="[a-z_]+"\} (\d+)$/gm)].reduce((n, m) => n + Number(m[1]), 0);
  };
  /** Waits until the dropped count passes `than`; returns it. */
  async function moved(than: number): Promise<number> {
    return eventually(`spans dropped past ${than}`, async () => {
      const now = await dropped();
      return now > than ? now : 0;
    });
  }
  const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

  /** Milliseconds per request, alternating between the two gateways so both see the same machine load. */
  async function timings(value: string, rounds: number): Promise<{ traced: number; plain: number }> {
    const t: number[] = [];
    const p: number[] = [];
    for (let i = 0; i < rounds; i++) {
      for (const [g, out] of [[traced, t], [plain, p]] as const) {
        const started = performance.now();
        expect((await getWithKey(g.url, PAGE, value)).status).toBe(200);
        out.push(performance.now() - started);
      }
    }
    return { traced: median(t), plain: median(p) };
  }

  test('requests keep their latency and the dropped spans are counted, hanging and gone', async () => {
    const value = await provision('collector-away');
    await timings(value, 5); // warm both
    const before = await dropped();
    const hanging = await timings(value, 40);
    expect(hanging.traced).toBeLessThan(hanging.plain * 4 + 20);
    expect(collector.requests).toBeGreaterThan(0);
    const whileHanging = await moved(before);

    await collector.close();
    const gone = await timings(value, 40);
    expect(gone.traced).toBeLessThan(gone.plain * 4 + 20);
    await moved(whileHanging);
  }, 60_000);
});
