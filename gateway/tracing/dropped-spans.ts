import { createNoopMeter, type Attributes, type Counter, type Meter, type MeterProvider } from '@opentelemetry/api';

/** Why a span was dropped: the queue was full, or its export failed (collector away, slow or refusing). */
export type DropReason = 'queue_full' | 'export_failed';

/**
 * A meter provider that hears the batch span processor's own count of processed spans
 * (`otel.sdk.processor.span.processed`, the SDK's self-observability) and passes on the dropped
 * ones: those the SDK marks with an `error.type` (`queue_full` when the bounded queue was full,
 * the exporter's error otherwise). Every other instrument is a no-op.
 */
export function droppedSpansMeter(onDropped: (count: number, reason: DropReason) => void): MeterProvider {
  const noop = createNoopMeter();
  const processed: Counter = {
    add(count: number, attributes?: Attributes) {
      const error = attributes?.['error.type'];
      if (error === undefined || count <= 0) return;
      onDropped(count, error === 'queue_full' ? 'queue_full' : 'export_failed');
    },
  };
  const meter: Meter = Object.assign(Object.create(noop) as Meter, {
    createCounter: (name: string) => (name === 'otel.sdk.processor.span.processed' ? processed : noop.createCounter(name)),
  });
  return { getMeter: () => meter };
}
