import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { decodeOtlpProtobuf } from './otlp-protobuf';

/** One span of an OTLP/HTTP export, flattened with its service's name. */
export interface ReceivedSpan {
  service: string;
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  /** OTLP span kind: 1 internal, 2 server, 3 client. */
  kind: number;
  /** The span's W3C trace state, when it has one. */
  traceState?: string;
  attributes: Record<string, string | number | boolean>;
}

/** OTEL_EXPORTER_OTLP_PROTOCOL's two OTLP/HTTP encodings; `http/protobuf` is the specification's default. */
export type OtlpProtocol = 'http/protobuf' | 'http/json';

/** The Content-Type each encoding is exported with (OTLP/HTTP specification). */
export const OTLP_CONTENT_TYPES: Readonly<Record<OtlpProtocol, string>> = { 'http/protobuf': 'application/x-protobuf', 'http/json': 'application/json' };

export interface OtlpReceiver {
  /** The base URL, for OTEL_EXPORTER_OTLP_ENDPOINT (`/v1/traces` is appended by the exporter). */
  readonly url: string;
  /** The only encoding taken; an export in the other is refused. */
  readonly protocol: OtlpProtocol;
  readonly spans: ReceivedSpan[];
  /** Every export body taken, as received (to look for bytes no decoded field shows). */
  readonly bodies: Buffer[];
  /** Export requests received (whatever the mode). */
  readonly requests: number;
  /** Why each refused request was refused (wrong path, Content-Type or encoding, undecodable body): empty when all is well. */
  readonly refused: string[];
  /** `ok` answers 200; `hang` reads the export and never answers. */
  mode: 'ok' | 'hang';
  close(): Promise<void>;
}

// Both encodings decode to this shape (OTLP/JSON's; 64-bit integers may be numbers or strings there).
type AnyValue = { stringValue?: string; intValue?: number | string; boolValue?: boolean; doubleValue?: number };
type KeyValue = { key: string; value: AnyValue };
interface ExportRequest {
  resourceSpans?: Array<{
    resource?: { attributes?: KeyValue[] };
    scopeSpans?: Array<{ spans?: Array<{ traceId: string; spanId: string; traceState?: string; parentSpanId?: string; name: string; kind: number; attributes?: KeyValue[] }> }>;
  }>;
}

const valueOf = (v: AnyValue): string | number | boolean =>
  v.stringValue ?? (v.intValue !== undefined ? Number(v.intValue) : undefined) ?? v.boolValue ?? v.doubleValue ?? '';
const attributesOf = (list: KeyValue[] = []): Record<string, string | number | boolean> => Object.fromEntries(list.map((kv) => [kv.key, valueOf(kv.value)]));

/** The spans of an `ExportTraceServiceRequest`, flat (ids in hex, as OTLP/JSON has them). */
export function flattenSpans(request: ExportRequest): ReceivedSpan[] {
  const out: ReceivedSpan[] = [];
  for (const rs of request.resourceSpans ?? []) {
    const service = String(attributesOf(rs.resource?.attributes)['service.name'] ?? '');
    for (const ss of rs.scopeSpans ?? []) {
      for (const s of ss.spans ?? []) {
        out.push({
          service, traceId: s.traceId, spanId: s.spanId, parentSpanId: s.parentSpanId ?? '', name: s.name, kind: s.kind, attributes: attributesOf(s.attributes),
          ...(s.traceState ? { traceState: s.traceState } : {}),
        });
      }
    }
  }
  return out;
}

/** Decodes an OTLP/HTTP JSON `ExportTraceServiceRequest` into flat spans. */
export const decodeOtlpJson = (body: string): ReceivedSpan[] => flattenSpans(JSON.parse(body) as ExportRequest);

const decoders: Record<OtlpProtocol, (body: Buffer) => ReceivedSpan[]> = {
  'http/protobuf': (body) => flattenSpans(decodeOtlpProtobuf(body)),
  'http/json': (body) => decodeOtlpJson(body.toString('utf8')),
};

/** Why an export is not taken, or undefined when it is. */
function refusal(req: http.IncomingMessage, protocol: OtlpProtocol): string | undefined {
  const type = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  const encoding = req.headers['content-encoding'] ?? 'identity';
  if (req.method !== 'POST' || req.url !== '/v1/traces') return `${req.method} ${req.url}: not POST /v1/traces`;
  if (type !== OTLP_CONTENT_TYPES[protocol]) return `Content-Type ${JSON.stringify(type)} where ${protocol} sends ${OTLP_CONTENT_TYPES[protocol]}`;
  if (encoding !== 'identity') return `Content-Encoding ${encoding}: not expected (OTEL_EXPORTER_OTLP_COMPRESSION is not set)`;
  return undefined;
}

/**
 * An OTLP/HTTP collector for tests, on a free loopback port: takes `POST /v1/traces` in one encoding,
 * protobuf (the default) or JSON, and keeps the spans, or hangs when told to. An export with the
 * other encoding's Content-Type is answered 415 and noted in `refused`, so a suite can tell which
 * encoding the exporter really used.
 */
export async function startOtlpReceiver(protocol: OtlpProtocol = 'http/protobuf'): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const bodies: Buffer[] = [];
  const refused: string[] = [];
  let requests = 0;
  const hanging = new Set<http.ServerResponse>();
  const receiver = {
    url: '',
    protocol,
    spans,
    bodies,
    refused,
    get requests() {
      return requests;
    },
    mode: 'ok' as 'ok' | 'hang',
    close: async () => {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      requests++;
      if (receiver.mode === 'hang') {
        hanging.add(res);
        return;
      }
      const why = refusal(req, protocol);
      if (why) {
        refused.push(why);
        res.writeHead(why.startsWith('Content-Type') ? 415 : 400).end();
        return;
      }
      try {
        const body = Buffer.concat(chunks);
        spans.push(...decoders[protocol](body));
        bodies.push(body);
      } catch (err) {
        refused.push(`undecodable ${protocol} export: ${(err as Error).message}`);
        res.writeHead(400).end();
        return;
      }
      // An empty ExportTraceServiceResponse: no bytes in protobuf, `{}` in JSON.
      res.writeHead(200, { 'content-type': OTLP_CONTENT_TYPES[protocol] }).end(protocol === 'http/json' ? '{}' : '');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return receiver;
}
