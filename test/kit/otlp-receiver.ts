import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** One span as an OTLP/HTTP JSON export carries it, flattened with its service's name. */
export interface ReceivedSpan {
  service: string;
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  /** OTLP span kind: 1 internal, 2 server, 3 client. */
  kind: number;
  attributes: Record<string, string | number | boolean>;
}

export interface OtlpReceiver {
  /** The base URL, for OTEL_EXPORTER_OTLP_ENDPOINT (`/v1/traces` is appended by the exporter). */
  readonly url: string;
  readonly spans: ReceivedSpan[];
  /** Export requests received (whatever the mode). */
  readonly requests: number;
  /** `ok` answers 200; `hang` reads the export and never answers. */
  mode: 'ok' | 'hang';
  close(): Promise<void>;
}

type AnyValue = { stringValue?: string; intValue?: number | string; boolValue?: boolean; doubleValue?: number };
type KeyValue = { key: string; value: AnyValue };
interface ExportRequest {
  resourceSpans?: Array<{
    resource?: { attributes?: KeyValue[] };
    scopeSpans?: Array<{ spans?: Array<{ traceId: string; spanId: string; parentSpanId?: string; name: string; kind: number; attributes?: KeyValue[] }> }>;
  }>;
}

const valueOf = (v: AnyValue): string | number | boolean =>
  v.stringValue ?? (v.intValue !== undefined ? Number(v.intValue) : undefined) ?? v.boolValue ?? v.doubleValue ?? '';
const attributesOf = (list: KeyValue[] = []): Record<string, string | number | boolean> => Object.fromEntries(list.map((kv) => [kv.key, valueOf(kv.value)]));

/** Decodes an OTLP/HTTP JSON `ExportTraceServiceRequest` into flat spans (ids in hex, as OTLP/JSON has them). */
export function decodeOtlpJson(body: string): ReceivedSpan[] {
  const request = JSON.parse(body) as ExportRequest;
  const out: ReceivedSpan[] = [];
  for (const rs of request.resourceSpans ?? []) {
    const service = String(attributesOf(rs.resource?.attributes)['service.name'] ?? '');
    for (const ss of rs.scopeSpans ?? []) {
      for (const s of ss.spans ?? []) {
        out.push({ service, traceId: s.traceId, spanId: s.spanId, parentSpanId: s.parentSpanId ?? '', name: s.name, kind: s.kind, attributes: attributesOf(s.attributes) });
      }
    }
  }
  return out;
}

/**
 * An OTLP/HTTP collector for tests, on a free loopback port: takes `POST /v1/traces` in the JSON
 * encoding (OTEL_EXPORTER_OTLP_PROTOCOL=http/json) and keeps the spans, or hangs when told to.
 */
export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  let requests = 0;
  const hanging = new Set<http.ServerResponse>();
  const receiver = {
    url: '',
    spans,
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
      if (req.method !== 'POST' || req.url !== '/v1/traces' || !/json/.test(req.headers['content-type'] ?? '')) {
        res.writeHead(400).end();
        return;
      }
      spans.push(...decodeOtlpJson(Buffer.concat(chunks).toString('utf8')));
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return receiver;
}
