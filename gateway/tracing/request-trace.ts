import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import { ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Attributes, type Context, type Span, type TextMapGetter, type Tracer } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { carriesKey } from '../keys/key-format';
import type { RequestContext, RequestTrace, RequestTracer, StepSpan } from '../pipeline';
import type { CallSpan, RawAnswer } from '../upstream/json-caller';
import { continuedTraceState } from './trace-state';

const propagator = new W3CTraceContextPropagator();
const headerGetter: TextMapGetter<IncomingHttpHeaders> = {
  get: (carrier, key) => carrier[key],
  keys: (carrier) => Object.keys(carrier),
};

/** `http.route` of each route: its path template (the reference route under /v1 is the document). */
const HTTP_ROUTE: Readonly<Record<RequestContext['route'], string | undefined>> = {
  ping: '/v1/ping',
  properties: '/v1/properties',
  property: '/v1/properties/{id}',
  insights: '/v1/insights/{path}',
  reference: '/v1/openapi.json',
  unmatched: undefined,
};
const KNOWN_METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'CONNECT', 'TRACE']);
/** The steps' spans: the key look-up is a call to Redis (a client span), the limit check an internal one. */
const STEP_OPTIONS: Readonly<Record<string, { kind: SpanKind; attributes?: Attributes }>> = {
  'keys.lookup': { kind: SpanKind.CLIENT, attributes: { 'db.system.name': 'redis' } },
  'limits.check': { kind: SpanKind.INTERNAL },
};
const NO_STEP: StepSpan = { end: () => undefined };

/** `server.address`/`server.port` of an upstream origin, worked out once per origin. */
const originAttributes = new Map<string, Attributes>();
function upstreamAttributes(origin: string): Attributes {
  let found = originAttributes.get(origin);
  if (!found) {
    const url = new URL(origin);
    found = { 'http.request.method': 'GET', 'server.address': url.hostname, 'server.port': Number(url.port || (url.protocol === 'https:' ? 443 : 80)) };
    if (originAttributes.size < 1000) originAttributes.set(origin, found);
  }
  return found;
}

/**
 * The headers that name `span` to the next service: `traceparent` (version 00, the span's ids and
 * sampled flag) and `tracestate` when the trace carries one, as W3CTraceContextPropagator.inject
 * writes them, without its context look-ups (measured: a third of an unsampled request's cost).
 */
function contextHeaders(span: Span): Record<string, string> {
  const sc = span.spanContext();
  const headers: Record<string, string> = { traceparent: `00-${sc.traceId}-${sc.spanId}-0${(sc.traceFlags & 1).toString(16)}` };
  const state = sc.traceState?.serialize();
  if (state) headers.tracestate = state;
  return headers;
}

/** An upstream call's client span; its end records the answer's status or the failure's kind. */
function callSpan(span: Span): CallSpan {
  return {
    headers: contextHeaders(span),
    end(answer: RawAnswer) {
      if ('kind' in answer) {
        span.setAttribute('error.type', answer.kind);
        span.setStatus({ code: SpanStatusCode.ERROR });
      } else {
        span.setAttribute('http.response.status_code', answer.status);
        if (answer.status >= 400) span.setStatus({ code: SpanStatusCode.ERROR });
      }
      span.end();
    },
  };
}

/** A recorded request: its server span and the children the pipeline asks for. */
class RecordedRequest implements RequestTrace {
  private readonly context: Context;
  constructor(private readonly tracer: Tracer, private readonly span: Span) {
    this.context = trace.setSpan(ROOT_CONTEXT, span);
  }

  step(name: string): StepSpan {
    const span = this.tracer.startSpan(name, STEP_OPTIONS[name] ?? { kind: SpanKind.INTERNAL }, this.context);
    return {
      end(error) {
        if (error !== undefined) span.setAttribute('listings.error', error);
        span.end();
      },
    };
  }

  call(origin: string, path: string): CallSpan {
    const q = path.indexOf('?');
    const attributes = { ...upstreamAttributes(origin), 'url.full': origin + (q < 0 ? path : path.slice(0, q)) };
    return callSpan(this.tracer.startSpan('GET', { kind: SpanKind.CLIENT, attributes }, this.context));
  }

  end(ctx: RequestContext, status: number): void {
    const span = this.span;
    const route = ctx.route === 'reference' && ctx.path !== '/v1/openapi.json' ? undefined : HTTP_ROUTE[ctx.route];
    if (route) {
      span.updateName(`${ctx.req.method} ${route}`);
      span.setAttribute('http.route', route);
    }
    span.setAttribute('http.response.status_code', status);
    if (ctx.errorCode) span.setAttribute('listings.error', ctx.errorCode);
    // The key's id, never its value or hash (an id is what the operator names the key by).
    const keyId = ctx.key?.id ?? ctx.refusedKeyId;
    if (keyId) span.setAttribute('listings.key_id', keyId);
    if (status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
    span.end();
  }

  ids(): { traceId: string; spanId: string } {
    const { traceId, spanId } = this.span.spanContext();
    return { traceId, spanId };
  }
}

/**
 * A request the sampler left out: nothing is recorded, and the data service is told so (the
 * `traceparent` it gets carries the trace id and the sampled flag off, naming the gateway's span).
 */
class UnrecordedRequest implements RequestTrace {
  private headers: Record<string, string> | undefined;
  constructor(private readonly span: Span) {}
  step(): StepSpan {
    return NO_STEP;
  }
  call(): CallSpan {
    this.headers ??= contextHeaders(this.span);
    return { headers: this.headers, end: () => undefined };
  }
  end(): void {}
  ids(): undefined {
    return undefined;
  }
}

/**
 * The caller's trace context, unless its `traceparent` or `tracestate` carries a key (the caller's
 * own, or one in this project's format): such a request starts a trace of its own instead. Of the
 * `tracestate`, only what trace-state.ts keeps is continued (recorded, exported and forwarded).
 */
function callerContext(req: IncomingMessage): Context {
  const { traceparent, tracestate } = req.headers;
  if (traceparent === undefined) return ROOT_CONTEXT;
  const key = req.headers['x-api-key'];
  if (carriesKey(String(traceparent), key) || (tracestate !== undefined && carriesKey(String(tracestate), key))) return ROOT_CONTEXT;
  const state = continuedTraceState(tracestate);
  return propagator.extract(ROOT_CONTEXT, { traceparent, ...(state !== undefined ? { tracestate: state } : {}) }, headerGetter);
}

/**
 * The gateway's tracer hook: a server span per request under `/v1`, continuing the caller's
 * `traceparent`/`tracestate` (W3C Trace Context) when it sent a valid one. Contexts are passed by
 * hand (no context manager, no async hooks): only the request's own steps are spans.
 */
export function createRequestTracer(tracer: Tracer): RequestTracer {
  return function traceRequest(req: IncomingMessage, path: string) {
    if (!path.startsWith('/v1/')) return undefined;
    const method = req.method && KNOWN_METHODS.has(req.method) ? req.method : '_OTHER';
    const span = tracer.startSpan(method, { kind: SpanKind.SERVER, attributes: { 'http.request.method': method } }, callerContext(req));
    return span.isRecording() ? new RecordedRequest(tracer, span) : new UnrecordedRequest(span);
  };
}

/** A service's own server span per request (the data service's), continuing the caller's trace; ended with the status. */
export type ServerSpans = (req: IncomingMessage, route: string) => (status: number) => void;

export function createServerSpans(tracer: Tracer): ServerSpans {
  return function serverSpan(req, route) {
    const method = req.method && KNOWN_METHODS.has(req.method) ? req.method : '_OTHER';
    const parent = req.headers.traceparent === undefined ? ROOT_CONTEXT : propagator.extract(ROOT_CONTEXT, req.headers, headerGetter);
    const attributes = { 'http.request.method': method, 'http.route': route };
    const span = tracer.startSpan(`${method} ${route}`, { kind: SpanKind.SERVER, attributes }, parent);
    return (status) => {
      span.setAttribute('http.response.status_code', status);
      if (status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
      span.end();
    };
  };
}
