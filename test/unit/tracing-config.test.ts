import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { ConfigError } from '../../gateway/config/config-error';
import { parseEnv } from '../../gateway/config/env';
import { parseTracingEnv } from '../../gateway/config/otel-env';
import { createMetrics } from '../../gateway/ops/metrics';

const ROOT = path.resolve(__dirname, '..', '..');
const ENDPOINT = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' };

describe('OTEL_* variables', () => {
  it('leave tracing off without an endpoint, with OTEL_SDK_DISABLED=true, or with OTEL_TRACES_EXPORTER=none', () => {
    expect(parseTracingEnv({})).toBeUndefined();
    expect(parseTracingEnv({ OTEL_SERVICE_NAME: 'x', OTEL_TRACES_SAMPLER: 'always_on' })).toBeUndefined();
    expect(parseTracingEnv({ ...ENDPOINT, OTEL_SDK_DISABLED: 'true' })).toBeUndefined();
    expect(parseTracingEnv({ ...ENDPOINT, OTEL_TRACES_EXPORTER: 'none' })).toBeUndefined();
    expect(parseEnv({}).tracing).toBeUndefined();
  });

  it("take the specification's defaults", () => {
    expect(parseTracingEnv(ENDPOINT)).toEqual({
      serviceName: 'listings-gateway',
      resourceAttributes: {},
      url: 'http://collector:4318/v1/traces',
      protocol: 'http/protobuf',
      headers: {},
      exportTimeoutMs: 10_000,
      sampler: { root: 'always_on', parentBased: true, ratio: 1 },
      batch: { maxQueueSize: 2048, maxExportBatchSize: 512, scheduledDelayMs: 5000, exportTimeoutMs: 30_000 },
    });
    expect(parseEnv(ENDPOINT).tracing?.url).toBe('http://collector:4318/v1/traces');
  });

  it('read the traces endpoint as is, the sampler and its ratio, the protocol, headers and resource attributes', () => {
    const config = parseTracingEnv({
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://ignored:4318/',
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://collector.example/otlp/traces',
      OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
      OTEL_TRACES_SAMPLER_ARG: '0.01',
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_EXPORTER_OTLP_HEADERS: 'authorization=Bearer%20abc,x-tenant=eu',
      OTEL_EXPORTER_OTLP_TRACES_HEADERS: 'x-tenant=us',
      OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment=prod,service.name=from-attributes',
      OTEL_SERVICE_NAME: 'edge-gateway',
    })!;
    expect(config.url).toBe('https://collector.example/otlp/traces');
    expect(config.sampler).toEqual({ root: 'traceidratio', parentBased: true, ratio: 0.01 });
    expect(config.protocol).toBe('http/json');
    expect(config.headers).toEqual({ authorization: 'Bearer abc', 'x-tenant': 'us' });
    expect(config.serviceName).toBe('edge-gateway');
    expect(config.resourceAttributes['deployment.environment']).toBe('prod');
    expect(parseTracingEnv({ ...ENDPOINT, OTEL_RESOURCE_ATTRIBUTES: 'service.name=from-attributes' })!.serviceName).toBe('from-attributes');
    expect(parseTracingEnv({ ...ENDPOINT, OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '0' })!.sampler).toEqual({ root: 'traceidratio', parentBased: false, ratio: 0 });
  });

  it.each([
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' }, 'OTEL_EXPORTER_OTLP_ENDPOINT'],
    [{ ...ENDPOINT, OTEL_TRACES_SAMPLER: 'sometimes' }, 'OTEL_TRACES_SAMPLER'],
    [{ ...ENDPOINT, OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '1.5' }, 'OTEL_TRACES_SAMPLER_ARG'],
    [{ ...ENDPOINT, OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' }, 'OTEL_EXPORTER_OTLP_PROTOCOL'],
    [{ ...ENDPOINT, OTEL_EXPORTER_OTLP_HEADERS: 'authorization' }, 'OTEL_EXPORTER_OTLP_HEADERS'],
    [{ ...ENDPOINT, OTEL_BSP_MAX_QUEUE_SIZE: '0' }, 'OTEL_BSP_MAX_QUEUE_SIZE'],
    [{ ...ENDPOINT, OTEL_TRACES_EXPORTER: 'zipkin' }, 'OTEL_TRACES_EXPORTER'],
  ])('refuse %j naming %s in one line', (env, name) => {
    expect(() => parseTracingEnv(env)).toThrow(ConfigError);
    expect(() => parseTracingEnv(env)).toThrow(new RegExp(`^environment variable ${name}: `));
  });

  it('never show a header value in a refusal', () => {
    expect(() => parseTracingEnv({ ...ENDPOINT, OTEL_EXPORTER_OTLP_HEADERS: 'authorization=secret-token%zz' })).toThrow(/entry 1 \(authorization\)/);
    expect(() => parseTracingEnv({ ...ENDPOINT, OTEL_EXPORTER_OTLP_HEADERS: 'authorization=secret-token%zz' })).not.toThrow(/secret-token/);
  });
});

describe('tracing off', () => {
  /** The OpenTelemetry modules a fresh process has loaded after building the gateway (and starting tracing when `endpoint` is given). */
  function loadedOtelModules(endpoint: string | undefined): number {
    const script = `
      const { parseEnv } = require('./dist/gateway/config/env');
      const { startTracing } = require('./dist/gateway/tracing/start-tracing');
      require('./dist/gateway/app');
      const env = parseEnv(${JSON.stringify(endpoint ? { OTEL_EXPORTER_OTLP_ENDPOINT: endpoint } : {})});
      startTracing(env.tracing, () => {}).then((t) => {
        process.stdout.write(String(Object.keys(require.cache).filter((k) => k.includes('@opentelemetry')).length));
        return t && t.shutdown(100);
      });`;
    return Number(execFileSync(process.execPath, ['-e', script], { cwd: ROOT, encoding: 'utf8' }));
  }

  it('loads no OpenTelemetry module; on, the SDK is loaded', () => {
    expect(loadedOtelModules(undefined)).toBe(0);
    expect(loadedOtelModules('http://127.0.0.1:9')).toBeGreaterThan(10);
  });
});

describe('gateway_spans_dropped_total', () => {
  it('is on /metrics from the start, at 0 for both reasons', async () => {
    const text = await createMetrics({ redis: false }).registry.metrics();
    expect(text).toContain('gateway_spans_dropped_total{reason="queue_full"} 0');
    expect(text).toContain('gateway_spans_dropped_total{reason="export_failed"} 0');
  });
});
