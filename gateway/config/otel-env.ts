import { ConfigError } from './config-error';

/** The sampler the OTEL_TRACES_SAMPLER variables chose. */
export interface SamplerConfig {
  readonly root: 'always_on' | 'always_off' | 'traceidratio';
  /** `parentbased_*`: a caller's sampled flag decides when it sent one. */
  readonly parentBased: boolean;
  /** For `traceidratio`: the share of new traces recorded, 0 to 1. */
  readonly ratio: number;
}

/** Tracing, as the standard OTEL_* variables describe it; present only when tracing is on. */
export interface TracingConfig {
  readonly serviceName: string;
  readonly resourceAttributes: Readonly<Record<string, string>>;
  /** Where spans are sent: the traces endpoint, `/v1/traces` appended to OTEL_EXPORTER_OTLP_ENDPOINT. */
  readonly url: string;
  readonly protocol: 'http/protobuf' | 'http/json';
  /** Sent with every export (often a collector's token: never logged). */
  readonly headers: Readonly<Record<string, string>>;
  /** One export gives up after this long. */
  readonly exportTimeoutMs: number;
  readonly sampler: SamplerConfig;
  /** The batch processor: spans beyond `maxQueueSize` waiting for export are dropped (and counted). */
  readonly batch: { readonly maxQueueSize: number; readonly maxExportBatchSize: number; readonly scheduledDelayMs: number; readonly exportTimeoutMs: number };
}

type Source = Readonly<Record<string, string | undefined>>;

/** A variable's value, blank meaning unset. */
function value(env: Source, name: string): string | undefined {
  const v = env[name]?.trim();
  return v ? v : undefined;
}

function integer(env: Source, name: string, fallback: number, min: number): number {
  const raw = value(env, name);
  if (raw === undefined) return fallback;
  if (!/^[0-9]+$/.test(raw) || Number(raw) < min) throw new ConfigError(`environment variable ${name}: must be a whole number of at least ${min}`);
  return Number(raw);
}

/** `key=value,key2=value2`, values percent-encoded (W3C Baggage style, as the specification asks). Values never shown. */
function keyValues(env: Source, name: string): Record<string, string> {
  const out: Record<string, string> = {};
  const raw = value(env, name);
  if (raw === undefined) return out;
  raw.split(',').forEach((entry, i) => {
    const eq = entry.indexOf('=');
    const key = eq > 0 ? entry.slice(0, eq).trim() : '';
    if (!key) throw new ConfigError(`environment variable ${name}: entry ${i + 1} must be key=value`);
    try {
      out[key] = decodeURIComponent(entry.slice(eq + 1).trim());
    } catch {
      throw new ConfigError(`environment variable ${name}: entry ${i + 1} (${key}) has a malformed percent-encoding`);
    }
  });
  return out;
}

function httpUrl(name: string, raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(`environment variable ${name}: must be an http:// or https:// URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new ConfigError(`environment variable ${name}: must be an http:// or https:// URL`);
  return url.href;
}

const SAMPLERS = ['always_on', 'always_off', 'traceidratio', 'parentbased_always_on', 'parentbased_always_off', 'parentbased_traceidratio'];

function sampler(env: Source): SamplerConfig {
  const name = value(env, 'OTEL_TRACES_SAMPLER') ?? 'parentbased_always_on';
  if (!SAMPLERS.includes(name)) throw new ConfigError(`environment variable OTEL_TRACES_SAMPLER: must be one of ${SAMPLERS.join(', ')}`);
  const parentBased = name.startsWith('parentbased_');
  const root = (parentBased ? name.slice('parentbased_'.length) : name) as SamplerConfig['root'];
  let ratio = 1;
  const arg = value(env, 'OTEL_TRACES_SAMPLER_ARG');
  if (root === 'traceidratio' && arg !== undefined) {
    ratio = /^(?:0|1|0?\.[0-9]+|1\.0*)$/.test(arg) ? Number(arg) : NaN;
    if (!(ratio >= 0 && ratio <= 1)) throw new ConfigError('environment variable OTEL_TRACES_SAMPLER_ARG: must be a ratio from 0 to 1');
  }
  return { root, parentBased, ratio };
}

function protocol(env: Source): TracingConfig['protocol'] {
  const name = value(env, 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL') ? 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL' : 'OTEL_EXPORTER_OTLP_PROTOCOL';
  const given = value(env, name) ?? 'http/protobuf';
  if (given !== 'http/protobuf' && given !== 'http/json') throw new ConfigError(`environment variable ${name}: must be http/protobuf or http/json (grpc is not supported)`);
  return given;
}

/**
 * The tracing configuration from the standard OTEL_* variables (OpenTelemetry's "SDK environment
 * variables"), or undefined when tracing is off: neither `OTEL_EXPORTER_OTLP_ENDPOINT` nor
 * `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` is set, `OTEL_SDK_DISABLED=true`, or `OTEL_TRACES_EXPORTER=none`.
 * Defaults are the specification's (sampler `parentbased_always_on`, protocol `http/protobuf`, export
 * timeout 10 s, queue 2,048 spans, batches of 512 every 5 s). Throws a one-line `ConfigError`.
 */
export function parseTracingEnv(env: Source, defaultServiceName = 'listings-gateway'): TracingConfig | undefined {
  const tracesEndpoint = value(env, 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT');
  const endpoint = value(env, 'OTEL_EXPORTER_OTLP_ENDPOINT');
  if (tracesEndpoint === undefined && endpoint === undefined) return undefined;
  if (value(env, 'OTEL_SDK_DISABLED')?.toLowerCase() === 'true') return undefined;
  const exporter = value(env, 'OTEL_TRACES_EXPORTER') ?? 'otlp';
  if (exporter === 'none') return undefined;
  if (exporter !== 'otlp') throw new ConfigError('environment variable OTEL_TRACES_EXPORTER: must be otlp or none');
  const url = tracesEndpoint !== undefined
    ? httpUrl('OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', tracesEndpoint)
    : httpUrl('OTEL_EXPORTER_OTLP_ENDPOINT', endpoint!).replace(/\/?$/, '/v1/traces');
  const resourceAttributes = keyValues(env, 'OTEL_RESOURCE_ATTRIBUTES');
  const maxQueueSize = integer(env, 'OTEL_BSP_MAX_QUEUE_SIZE', 2048, 1);
  return Object.freeze({
    serviceName: value(env, 'OTEL_SERVICE_NAME') ?? resourceAttributes['service.name'] ?? defaultServiceName,
    resourceAttributes,
    url,
    protocol: protocol(env),
    headers: { ...keyValues(env, 'OTEL_EXPORTER_OTLP_HEADERS'), ...keyValues(env, 'OTEL_EXPORTER_OTLP_TRACES_HEADERS') },
    exportTimeoutMs: integer(env, 'OTEL_EXPORTER_OTLP_TRACES_TIMEOUT', integer(env, 'OTEL_EXPORTER_OTLP_TIMEOUT', 10_000, 1), 1),
    sampler: sampler(env),
    batch: {
      maxQueueSize,
      maxExportBatchSize: Math.min(maxQueueSize, integer(env, 'OTEL_BSP_MAX_EXPORT_BATCH_SIZE', 512, 1)),
      scheduledDelayMs: integer(env, 'OTEL_BSP_SCHEDULE_DELAY', 5_000, 0),
      exportTimeoutMs: integer(env, 'OTEL_BSP_EXPORT_TIMEOUT', 30_000, 1),
    },
  });
}
