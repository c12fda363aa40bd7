/**
 * The test collector's protobuf reader (test/kit/otlp-protobuf.ts) against the real exporter: spans
 * made by the SDK are serialized by otlp-transformer's ProtobufTraceSerializer (what the gateway's
 * http/protobuf exporter sends) and by its JsonTraceSerializer (http/json); the reader's decoding
 * of the first equals the second, field by field, for every field it reads. Hand-made messages
 * check what the SDK cannot make (kvlist and bytes values, negative and 64-bit integers, unknown
 * fields of every wire type) and that malformed input throws instead of being half read.
 */
import { context, createTraceState, SpanKind, SpanStatusCode, trace, TraceFlags, type Span } from '@opentelemetry/api';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { JsonTraceSerializer, ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import { decodeOtlpProtobuf, wireFields, type OtlpAnyValue, type OtlpExportTraceRequest } from '../kit/otlp-protobuf';
import { decodeOtlpJson, flattenSpans } from '../kit/otlp-receiver';

/** Two scopes, a remote parent with a tracestate, all span kinds the gateway uses, every attribute type, all statuses, events and links (to be skipped). */
function finishedSpans(): ReadableSpan[] {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': 'listings-gateway', 'service.instance.id': 'é-1', 'host.cpus': 2, 'deployment.canary': false }),
    spanProcessors: [new SimpleSpanProcessor(exporter)],
  });
  const http = provider.getTracer('listings-gateway', '1.2.3');
  const keys = provider.getTracer('keys');
  const remote = trace.setSpanContext(context.active(), {
    traceId: '0af7651916cd43dd8448eb211c80319c', spanId: 'b7ad6b7169203331', traceFlags: TraceFlags.SAMPLED, isRemote: true, traceState: createTraceState('caller=1,other=x'),
  });
  const server = http.startSpan('GET /v1/properties', {
    kind: SpanKind.SERVER,
    attributes: {
      'http.request.method': 'GET', 'http.response.status_code': 200, 'listings.empty': '', 'big': 2 ** 40, 'negative': -5, 'ratio': 0.25, 'whole.double': 3.5e9 + 0.5,
      'ok': true, 'notes': ['a', 'ü', ''], 'ports': [80, 443], 'flags': [true, false], 'weights': [1.5, -2.25],
    },
  }, remote);
  const under = trace.setSpan(remote, server);
  const lookup: Span = keys.startSpan('keys.lookup', { kind: SpanKind.CLIENT, attributes: { 'db.system.name': 'redis' } }, under);
  lookup.addEvent('retry', { attempt: 2 });
  lookup.setStatus({ code: SpanStatusCode.ERROR, message: 'connection lost' });
  lookup.end();
  const limits = http.startSpan('limits.check', { links: [{ context: lookup.spanContext(), attributes: { why: 'after' } }] }, under);
  limits.setStatus({ code: SpanStatusCode.OK });
  limits.end();
  server.end();
  http.startSpan('a new trace', { kind: SpanKind.INTERNAL }).end();
  return exporter.getFinishedSpans();
}

type JsonValue = { stringValue?: string; boolValue?: boolean; intValue?: number | string; doubleValue?: number; arrayValue?: { values?: JsonValue[] } };
type JsonKeyValue = { key: string; value: JsonValue };
type JsonSpan = Record<string, unknown> & { attributes?: JsonKeyValue[]; status?: { code?: number; message?: string } };
interface JsonRequest {
  resourceSpans: Array<{ resource?: { attributes?: JsonKeyValue[] }; scopeSpans: Array<{ scope?: { name: string }; spans: JsonSpan[] }> }>;
}

/** The JSON serializer's request, cut to the fields the reader reads (64-bit integers as decimal strings, as the reader gives them). */
function readable(json: JsonRequest): OtlpExportTraceRequest {
  const value = (v: JsonValue): OtlpAnyValue => {
    if (v.intValue !== undefined) return { intValue: String(v.intValue) };
    if (v.arrayValue) return { arrayValue: { values: (v.arrayValue.values ?? []).map(value) } };
    return v as OtlpAnyValue;
  };
  const attributes = (list: JsonKeyValue[] = []) => list.map((kv) => ({ key: kv.key, value: value(kv.value) }));
  const pick = <K extends string>(o: Record<string, unknown>, keys: readonly K[]): Partial<Record<K, unknown>> =>
    Object.fromEntries(keys.filter((k) => o[k] !== undefined).map((k) => [k, o[k]])) as Partial<Record<K, unknown>>;
  return {
    resourceSpans: json.resourceSpans.map((rs) => ({
      resource: { attributes: attributes(rs.resource?.attributes) },
      scopeSpans: rs.scopeSpans.map((ss) => ({
        scope: { name: ss.scope!.name },
        spans: ss.spans.map((s) => ({
          ...pick(s, ['traceId', 'spanId', 'traceState', 'parentSpanId', 'name', 'kind', 'startTimeUnixNano', 'endTimeUnixNano'] as const),
          attributes: attributes(s.attributes),
          status: { code: s.status?.code ?? 0, ...(s.status?.message ? { message: s.status.message } : {}) },
        })),
      })),
    })),
  } as OtlpExportTraceRequest;
}

describe('the OTLP protobuf reader', () => {
  const spans = finishedSpans();
  const protobuf = ProtobufTraceSerializer.serializeRequest(spans)!;
  const jsonText = new TextDecoder().decode(JsonTraceSerializer.serializeRequest(spans)!);
  const json = JSON.parse(jsonText) as JsonRequest;

  it('decodes what the http/protobuf exporter sends as the http/json exporter sends it, field by field', () => {
    const decoded = decodeOtlpProtobuf(protobuf);
    // Not vacuous: everything made above is there, in both.
    expect(decoded.resourceSpans[0]!.scopeSpans.map((ss) => [ss.scope?.name, ss.spans.length])).toEqual([['keys', 1], ['listings-gateway', 3]]);
    const server = decoded.resourceSpans[0]!.scopeSpans[1]!.spans.find((s) => s.name === 'GET /v1/properties')!;
    expect(server).toMatchObject({ traceId: '0af7651916cd43dd8448eb211c80319c', parentSpanId: 'b7ad6b7169203331', traceState: 'caller=1,other=x', kind: 2 });
    expect(server.startTimeUnixNano).toMatch(/^1[0-9]{18}$/);
    expect(BigInt(server.endTimeUnixNano)).toBeGreaterThanOrEqual(BigInt(server.startTimeUnixNano));

    expect(decoded).toEqual(readable(json));
  });

  it('gives the receiver the same flat spans from either encoding', () => {
    const flat = flattenSpans(decodeOtlpProtobuf(protobuf));
    expect(flat).toHaveLength(4);
    expect(flat).toEqual(decodeOtlpJson(jsonText));
    expect(flat.find((s) => s.name === 'GET /v1/properties')!.attributes).toMatchObject({ 'big': 2 ** 40, 'negative': -5, 'ratio': 0.25, 'ok': true, 'listings.empty': '' });
  });

  it('reads kvlist, bytes and 64-bit values and skips unknown fields of every wire type', () => {
    const kvlist = message(field(1, 2, text('inner')), field(2, 2, message(field(3, 0, varint(-1n)))));
    const any = message(
      field(99, 0, varint(7n)), field(98, 1, new Uint8Array(8)), field(97, 5, new Uint8Array(4)), field(96, 2, text('skipped')),
      field(6, 2, message(field(1, 2, kvlist))),
    );
    const attributes = [
      message(field(1, 2, text('kv')), field(2, 2, any)),
      message(field(1, 2, text('raw')), field(2, 2, message(field(7, 2, new Uint8Array([0, 255, 16]))))),
      message(field(1, 2, text('max')), field(2, 2, message(field(3, 0, varint(2n ** 63n - 1n))))),
      message(field(1, 2, text('min')), field(2, 2, message(field(3, 0, varint(-(2n ** 63n)))))),
    ];
    const span = message(field(1, 2, hexBytes('00112233445566778899aabbccddeeff')), field(2, 2, hexBytes('0102030405060708')), field(5, 2, text('s')), ...attributes.map((a) => field(9, 2, a)));
    const request = message(field(1, 2, message(field(2, 2, message(field(2, 2, span))))));
    const s = decodeOtlpProtobuf(request).resourceSpans[0]!.scopeSpans[0]!.spans[0]!;
    expect(s).toMatchObject({ traceId: '00112233445566778899aabbccddeeff', spanId: '0102030405060708', name: 's', kind: 0 });
    expect(s.attributes).toEqual([
      { key: 'kv', value: { kvlistValue: { values: [{ key: 'inner', value: { intValue: '-1' } }] } } },
      { key: 'raw', value: { bytesValue: 'AP8Q' } },
      { key: 'max', value: { intValue: '9223372036854775807' } },
      { key: 'min', value: { intValue: '-9223372036854775808' } },
    ]);
  });

  it('throws on a truncated or malformed message instead of reading half of it', () => {
    expect(() => decodeOtlpProtobuf(protobuf.subarray(0, protobuf.length - 3))).toThrow(/runs past the message|truncated/);
    expect(() => wireFields(new Uint8Array([0x08, 0x80]))).toThrow(/truncated varint/);
    expect(() => wireFields(new Uint8Array([0x0b]))).toThrow(/wire type 3/);
    expect(() => wireFields(new Uint8Array([0x00, 0x00]))).toThrow(/field number 0/);
    // A known field in the wrong wire type is a schema error, not data.
    expect(() => decodeOtlpProtobuf(message(field(1, 0, varint(1n))))).toThrow(/resource_spans \(field 1\) came as varint/);
  });
});

// A protobuf writer just big enough for the hand-made messages above.
function varint(n: bigint): Uint8Array {
  let v = BigInt.asUintN(64, n);
  const out: number[] = [];
  do {
    out.push(Number(v & 0x7fn) | (v > 0x7fn ? 0x80 : 0));
    v >>= 7n;
  } while (v > 0n);
  return Uint8Array.from(out);
}
const text = (s: string): Uint8Array => new TextEncoder().encode(s);
const hexBytes = (h: string): Uint8Array => Uint8Array.from(Buffer.from(h, 'hex'));
const message = (...parts: Uint8Array[]): Uint8Array => Uint8Array.from(Buffer.concat(parts));
function field(number: number, wire: 0 | 1 | 2 | 5, payload: Uint8Array): Uint8Array {
  const tag = varint(BigInt((number << 3) | wire));
  return wire === 2 ? message(tag, varint(BigInt(payload.length)), payload) : message(tag, payload);
}
