import type { Tracer } from '@opentelemetry/api';
import { AlwaysOffSampler, AlwaysOnSampler, BasicTracerProvider, BatchSpanProcessor, ParentBasedSampler, TraceIdRatioBasedSampler, type BufferConfig, type Sampler, type SpanExporter } from '@opentelemetry/sdk-trace-base';
import { resourceFromAttributes } from '@opentelemetry/resources';
import type { SamplerConfig, TracingConfig } from '../config/otel-env';
import type { RequestTracer } from '../pipeline';
import { droppedSpansMeter, type DropReason } from './dropped-spans';
import { createRequestTracer, createServerSpans, type ServerSpans } from './request-trace';

export interface Tracing {
  readonly tracer: Tracer;
  /** A service's own server spans (the data service's). */
  readonly serverSpans: ServerSpans;
  /** The gateway's hook (observe.ts): a server span per /v1 request. */
  readonly requestTracer: RequestTracer;
  /** Exports what is queued, waiting at most `timeoutMs`. */
  shutdown(timeoutMs: number): Promise<void>;
}

function sampler(config: SamplerConfig): Sampler {
  const root = config.root === 'always_on' ? new AlwaysOnSampler() : config.root === 'always_off' ? new AlwaysOffSampler() : new TraceIdRatioBasedSampler(config.ratio);
  return config.parentBased ? new ParentBasedSampler({ root }) : root;
}

/** The OTLP/HTTP exporter of the configured protocol; only that one is loaded. */
async function exporter(config: TracingConfig): Promise<SpanExporter> {
  const options = { url: config.url, headers: { ...config.headers }, timeoutMillis: config.exportTimeoutMs };
  if (config.protocol === 'http/json') {
    const { OTLPTraceExporter } = await import('@opentelemetry/exporter-trace-otlp-http');
    return new OTLPTraceExporter(options);
  }
  const { OTLPTraceExporter } = await import('@opentelemetry/exporter-trace-otlp-proto');
  return new OTLPTraceExporter(options);
}

/**
 * The OpenTelemetry SDK as the configuration asks: a tracer provider with the sampler, a batch span
 * processor with a bounded queue in front of an OTLP/HTTP exporter with a timeout. Finished spans
 * wait in the queue and are exported from a timer, so a collector that is away or slow costs a
 * request nothing; what cannot be queued or exported is dropped and told to `onDropped`.
 */
export async function startOtelSdk(config: TracingConfig, onDropped: (count: number, reason: DropReason) => void): Promise<Tracing> {
  const options = {
    maxQueueSize: config.batch.maxQueueSize,
    maxExportBatchSize: config.batch.maxExportBatchSize,
    scheduledDelayMillis: config.batch.scheduledDelayMs,
    exportTimeoutMillis: config.batch.exportTimeoutMs,
    // Passed on to the processor (sdk-trace's BatchSpanProcessorOptions); the shim's type omits it.
    selfObsMeterProvider: droppedSpansMeter(onDropped),
  };
  const processor = new BatchSpanProcessor(await exporter(config), options as BufferConfig);
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ ...config.resourceAttributes, 'service.name': config.serviceName }),
    sampler: sampler(config.sampler),
    spanProcessors: [processor],
  });
  const tracer = provider.getTracer('listings-gateway');
  return {
    tracer,
    requestTracer: createRequestTracer(tracer),
    serverSpans: createServerSpans(tracer),
    async shutdown(timeoutMs) {
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<void>((resolve) => (timer = setTimeout(resolve, timeoutMs).unref()));
      await Promise.race([provider.shutdown().catch(() => undefined), late]);
      clearTimeout(timer);
    },
  };
}
