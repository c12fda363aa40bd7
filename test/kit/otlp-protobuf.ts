/**
 * A reader for OTLP/HTTP protobuf trace exports (`application/x-protobuf`), for the test collector:
 * the protobuf wire format (varint, 64-bit, length-delimited, 32-bit fields) and as much of the OTLP
 * trace schema as the suites read, decoded into the shape OTLP/JSON gives the same request (ids in
 * hex, 64-bit integers as decimal strings), so one flattening serves both encodings.
 *
 * Field numbers are those of opentelemetry-proto: collector/trace/v1/trace_service.proto,
 * trace/v1/trace.proto, common/v1/common.proto, resource/v1/resource.proto. A field not listed
 * here is skipped by its wire type, as a protobuf reader must.
 */

/** One field as it is on the wire, before the schema says what it means. */
export type WireField =
  | { readonly field: number; readonly wire: 0; readonly varint: bigint }
  | { readonly field: number; readonly wire: 1 | 2 | 5; readonly bytes: Uint8Array };

const WIRE_NAMES: Record<number, string> = { 0: 'varint', 1: '64-bit', 2: 'length-delimited', 5: '32-bit' };

/** The fields of one message, in order; throws on a truncated message or a wire type OTLP never uses (groups). */
export function wireFields(buf: Uint8Array): WireField[] {
  const fields: WireField[] = [];
  let pos = 0;
  const varint = (): bigint => {
    let value = 0n;
    for (let shift = 0n; ; shift += 7n) {
      if (pos >= buf.length) throw new Error('protobuf: truncated varint');
      if (shift > 63n) throw new Error('protobuf: varint longer than 10 bytes');
      const byte = buf[pos++]!;
      value |= BigInt(byte & 0x7f) << shift;
      if (byte < 0x80) return value;
    }
  };
  const take = (n: number): Uint8Array => {
    if (pos + n > buf.length) throw new Error(`protobuf: field runs past the message (${n} bytes at ${pos} of ${buf.length})`);
    return buf.subarray(pos, (pos += n));
  };
  while (pos < buf.length) {
    const tag = varint();
    const field = Number(tag >> 3n);
    const wire = Number(tag & 7n);
    if (field === 0) throw new Error('protobuf: field number 0');
    if (wire === 0) fields.push({ field, wire, varint: varint() });
    else if (wire === 1) fields.push({ field, wire, bytes: take(8) });
    else if (wire === 2) fields.push({ field, wire, bytes: take(Number(varint())) });
    else if (wire === 5) fields.push({ field, wire, bytes: take(4) });
    else throw new Error(`protobuf: wire type ${wire} (field ${field}) is not used by OTLP`);
  }
  return fields;
}

// What a field means, checked against its wire type: a mismatch is a schema error, not data.
function wireOf(f: WireField, wire: WireField['wire'], what: string): WireField {
  if (f.wire !== wire) throw new Error(`protobuf: ${what} (field ${f.field}) came as ${WIRE_NAMES[f.wire]}, not ${WIRE_NAMES[wire]}`);
  return f;
}
const bytesOf = (f: WireField, what: string): Uint8Array => (wireOf(f, 2, what) as { bytes: Uint8Array }).bytes;
const varintOf = (f: WireField, what: string): bigint => (wireOf(f, 0, what) as { varint: bigint }).varint;
const fixed64Of = (f: WireField, what: string): DataView => {
  const { bytes } = wireOf(f, 1, what) as { bytes: Uint8Array };
  return new DataView(bytes.buffer, bytes.byteOffset, 8);
};
const text = (f: WireField, what: string): string => new TextDecoder('utf-8', { fatal: true }).decode(bytesOf(f, what));
const hex = (f: WireField, what: string): string => Buffer.from(bytesOf(f, what)).toString('hex');

/** The decoded subset, named and shaped as in OTLP/JSON. */
export interface OtlpAnyValue {
  stringValue?: string;
  boolValue?: boolean;
  /** int64, as OTLP/JSON writes it: a decimal string. */
  intValue?: string;
  doubleValue?: number;
  arrayValue?: { values: OtlpAnyValue[] };
  kvlistValue?: { values: OtlpKeyValue[] };
  /** bytes, as OTLP/JSON writes them: base64. */
  bytesValue?: string;
}
export interface OtlpKeyValue {
  key: string;
  value: OtlpAnyValue;
}
export interface OtlpSpan {
  traceId: string;
  spanId: string;
  traceState?: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  startTimeUnixNano: string;
  endTimeUnixNano: string;
  attributes: OtlpKeyValue[];
  status?: { code: number; message?: string };
}
export interface OtlpExportTraceRequest {
  resourceSpans: Array<{
    resource?: { attributes: OtlpKeyValue[] };
    scopeSpans: Array<{ scope?: { name: string }; spans: OtlpSpan[] }>;
  }>;
}

/** Decodes each field a schema knows; the others are skipped. */
function decode<T>(buf: Uint8Array, into: T, known: Record<number, (f: WireField, into: T) => void>): T {
  for (const f of wireFields(buf)) known[f.field]?.(f, into);
  return into;
}

function anyValue(buf: Uint8Array): OtlpAnyValue {
  return decode<OtlpAnyValue>(buf, {}, {
    1: (f, v) => (v.stringValue = text(f, 'AnyValue.string_value')),
    2: (f, v) => (v.boolValue = varintOf(f, 'AnyValue.bool_value') !== 0n),
    3: (f, v) => (v.intValue = BigInt.asIntN(64, varintOf(f, 'AnyValue.int_value')).toString()),
    4: (f, v) => (v.doubleValue = fixed64Of(f, 'AnyValue.double_value').getFloat64(0, true)),
    5: (f, v) => (v.arrayValue = decode(bytesOf(f, 'AnyValue.array_value'), { values: [] as OtlpAnyValue[] }, {
      1: (g, a) => a.values.push(anyValue(bytesOf(g, 'ArrayValue.values'))),
    })),
    6: (f, v) => (v.kvlistValue = { values: keyValues(bytesOf(f, 'AnyValue.kvlist_value'), 1, 'KeyValueList.values') }),
    7: (f, v) => (v.bytesValue = Buffer.from(bytesOf(f, 'AnyValue.bytes_value')).toString('base64')),
  });
}

function keyValue(buf: Uint8Array): OtlpKeyValue {
  return decode<OtlpKeyValue>(buf, { key: '', value: {} }, {
    1: (f, kv) => (kv.key = text(f, 'KeyValue.key')),
    2: (f, kv) => (kv.value = anyValue(bytesOf(f, 'KeyValue.value'))),
  });
}

/** The repeated KeyValue field `field` of a message (Resource.attributes, Span.attributes, KeyValueList.values). */
function keyValues(buf: Uint8Array, field: number, what: string): OtlpKeyValue[] {
  return decode(buf, [] as OtlpKeyValue[], { [field]: (f, list) => list.push(keyValue(bytesOf(f, what))) });
}

const fixed64Text = (f: WireField, what: string): string => fixed64Of(f, what).getBigUint64(0, true).toString();

function span(buf: Uint8Array): OtlpSpan {
  return decode<OtlpSpan>(buf, { traceId: '', spanId: '', name: '', kind: 0, startTimeUnixNano: '0', endTimeUnixNano: '0', attributes: [] }, {
    1: (f, s) => (s.traceId = hex(f, 'Span.trace_id')),
    2: (f, s) => (s.spanId = hex(f, 'Span.span_id')),
    3: (f, s) => (s.traceState = text(f, 'Span.trace_state')),
    4: (f, s) => (s.parentSpanId = hex(f, 'Span.parent_span_id')),
    5: (f, s) => (s.name = text(f, 'Span.name')),
    6: (f, s) => (s.kind = Number(varintOf(f, 'Span.kind'))),
    7: (f, s) => (s.startTimeUnixNano = fixed64Text(f, 'Span.start_time_unix_nano')),
    8: (f, s) => (s.endTimeUnixNano = fixed64Text(f, 'Span.end_time_unix_nano')),
    9: (f, s) => s.attributes.push(keyValue(bytesOf(f, 'Span.attributes'))),
    15: (f, s) => (s.status = decode<{ code: number; message?: string }>(bytesOf(f, 'Span.status'), { code: 0 }, {
      2: (g, st) => (st.message = text(g, 'Status.message')),
      3: (g, st) => (st.code = Number(varintOf(g, 'Status.code'))),
    })),
  });
}

type ResourceSpans = OtlpExportTraceRequest['resourceSpans'][number];
type ScopeSpans = ResourceSpans['scopeSpans'][number];

function scopeSpans(buf: Uint8Array): ScopeSpans {
  return decode<ScopeSpans>(buf, { spans: [] }, {
    1: (f, ss) => (ss.scope = decode(bytesOf(f, 'ScopeSpans.scope'), { name: '' }, { 1: (g, scope) => (scope.name = text(g, 'InstrumentationScope.name')) })),
    2: (f, ss) => ss.spans.push(span(bytesOf(f, 'ScopeSpans.spans'))),
  });
}

function resourceSpans(buf: Uint8Array): ResourceSpans {
  return decode<ResourceSpans>(buf, { scopeSpans: [] }, {
    1: (f, rs) => (rs.resource = { attributes: keyValues(bytesOf(f, 'ResourceSpans.resource'), 1, 'Resource.attributes') }),
    2: (f, rs) => rs.scopeSpans.push(scopeSpans(bytesOf(f, 'ResourceSpans.scope_spans'))),
  });
}

/** Decodes an OTLP/HTTP protobuf `ExportTraceServiceRequest` body. */
export function decodeOtlpProtobuf(body: Uint8Array): OtlpExportTraceRequest {
  return decode<OtlpExportTraceRequest>(body, { resourceSpans: [] }, {
    1: (f, req) => req.resourceSpans.push(resourceSpans(bytesOf(f, 'ExportTraceServiceRequest.resource_spans'))),
  });
}
