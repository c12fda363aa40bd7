/**
 * Codec failures are counted in `gateway_compression_failures_total{coding}` and logged at most once
 * a minute (gateway/compression/codec-failures.ts): a codec failing on every answer must show on
 * the metrics and must not write a line per request. The answers themselves still go out
 * uncompressed (compression-send.test.ts).
 */
import zlib from 'node:zlib';
import pino from 'pino';
import { createMetrics } from '../../gateway/ops/metrics';

type CodecsModule = typeof import('../../gateway/compression/codecs');
type FailuresModule = typeof import('../../gateway/compression/codec-failures');
type VariantsModule = typeof import('../../gateway/compression/static-variants');

const page = Buffer.from(JSON.stringify({ data: Array.from({ length: 40 }, (_, i) => ({ id: `GB-${i}`, title: `A flat with ${i % 4} bedrooms` })) }));

/** The compression modules loaded against a node:zlib whose gzip compression (one-shot, kept engine, thread pool) throws. */
function withFailingGzip(): { codecs: CodecsModule; failures: FailuresModule; variants: VariantsModule } {
  let loaded!: { codecs: CodecsModule; failures: FailuresModule; variants: VariantsModule };
  jest.isolateModules(() => {
    const fail = (): never => {
      throw new Error('a native zlib error');
    };
    const failLater = (_b: Buffer, _o: unknown, cb: (err: Error) => void): void => void setImmediate(() => cb(new Error('a native zlib error')));
    jest.doMock('node:zlib', () => ({ ...zlib, gzipSync: fail, createGzip: fail, gzip: failLater }));
    /* eslint-disable @typescript-eslint/no-require-imports */
    loaded = {
      codecs: require('../../gateway/compression/codecs') as CodecsModule,
      failures: require('../../gateway/compression/codec-failures') as FailuresModule,
      variants: require('../../gateway/compression/static-variants') as VariantsModule,
    };
    /* eslint-enable @typescript-eslint/no-require-imports */
  });
  jest.dontMock('node:zlib');
  return loaded;
}

async function failuresCounted(metrics: ReturnType<typeof createMetrics>): Promise<string> {
  return (await metrics.registry.getSingleMetricAsString('gateway_compression_failures_total')).split('\n').filter((l) => !l.startsWith('#')).join('\n');
}

it('every failure is counted by coding; one log line a minute at most, with the failures since the last', async () => {
  const { codecs, failures } = withFailingGzip();
  const metrics = createMetrics({ redis: false });
  const lines: Array<Record<string, unknown>> = [];
  const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) });
  let now = 1_000_000;
  failures.reportCodecFailuresTo(failures.codecFailureSink(metrics.tally.compressionFailures, logger, () => now));

  for (let i = 0; i < 3; i++) expect(codecs.compressedOrUndefined('gzip', page)).toBeUndefined();
  expect(codecs.compressedOrUndefined('br', page)).toBeDefined(); // brotli works: not counted
  expect(await failuresCounted(metrics)).toBe('gateway_compression_failures_total{coding="gzip"} 3');
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatchObject({ level: 40, coding: 'gzip', failures: 1, err: 'a native zlib error' });

  now += 59_000;
  codecs.compressedOrUndefined('gzip', page);
  expect(lines).toHaveLength(1);
  now += 1_000;
  codecs.compressedOrUndefined('gzip', page);
  expect(lines).toHaveLength(2);
  expect(lines[1]).toMatchObject({ coding: 'gzip', failures: 4 });
  expect(await failuresCounted(metrics)).toBe('gateway_compression_failures_total{coding="gzip"} 5');
  failures.reportCodecFailuresTo(undefined);
});

it('a fixed body whose compression fails on the thread pool is counted too, and goes uncompressed', async () => {
  const { failures, variants } = withFailingGzip();
  const metrics = createMetrics({ redis: false });
  failures.reportCodecFailuresTo(failures.codecFailureSink(metrics.tally.compressionFailures, pino({ level: 'silent' })));
  const fixed = new variants.StaticVariants(page); // its forms are made now, at start-up
  // The ask before the form is ready fails at the per-request level (1), the thread pool's form fails too (2).
  expect(fixed.pick('gzip').coding).toBe('identity');
  for (let i = 0; i < 50 && (await failuresCounted(metrics)) !== 'gateway_compression_failures_total{coding="gzip"} 2'; i++) await new Promise((r) => setTimeout(r, 20));
  expect(await failuresCounted(metrics)).toBe('gateway_compression_failures_total{coding="gzip"} 2');
  failures.reportCodecFailuresTo(undefined);
});
