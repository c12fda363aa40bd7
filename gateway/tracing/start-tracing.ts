// gateway/tracing/: OpenTelemetry traces: loaded only when OTEL_EXPORTER_OTLP_(TRACES_)ENDPOINT is set; the
// SDK set-up, one span a request, and the dropped-span count.
import type { TracingConfig } from '../config/otel-env';
import type { DropReason } from './dropped-spans';
import type { Tracing } from './otel-sdk';

export type { Tracing };

/**
 * Traces on, when the configuration says so (config/otel-env.ts); else undefined, and nothing of
 * OpenTelemetry is loaded: the SDK is imported here, on demand, never by the request's way.
 */
export async function startTracing(config: TracingConfig | undefined, onDropped: (count: number, reason: DropReason) => void): Promise<Tracing | undefined> {
  if (!config) return undefined;
  const { startOtelSdk } = await import('./otel-sdk');
  return startOtelSdk(config, onDropped);
}
