// gateway/config/: configuration read and validated once at start-up: environment variables, gateway.yaml, the
// portal's and OpenTelemetry's settings, bounded YAML reading, and the reloader of changed files.
import ipaddr from 'ipaddr.js';
import { z } from 'zod';
import { ConfigError } from './config-error';
import { parseTracingEnv, type TracingConfig } from './otel-env';
import { parseRedisTopology, type RedisTopology } from './redis-env';
import { estimatedBits, MIN_TOKEN_BITS } from './token-strength';

const port = (fallback: number) =>
  z.coerce.number({ invalid_type_error: 'must be a port number' }).int().min(0).max(65535).default(fallback);
const positiveInt = (fallback: number) => z.coerce.number().int().positive().default(fallback);
/** Standard Webhooks secrets: `whsec_` + base64 of 24 to 64 bytes. The message never shows the value. */
const webhookSecret = z.string().refine((v) => {
  const m = /^whsec_([A-Za-z0-9+/]+={0,2})$/.exec(v);
  if (!m || m[1]!.length % 4 !== 0) return false;
  const bytes = Buffer.from(m[1]!, 'base64').length;
  return bytes >= 24 && bytes <= 64;
}, 'must be "whsec_" followed by the base64 of 24 to 64 random bytes (the value is not shown)');
const base64url32 = z
  .string()
  .regex(/^[A-Za-z0-9_-]{43}$/, 'must be base64url of exactly 32 bytes (43 characters)');

/** Every environment variable of docs/reference.md, with the defaults that make `npm start` work. */
const EnvSchema = z.object({
  PORT: port(8080),
  HOST: z.string().min(1).default('127.0.0.1'),
  BACKEND_URL: z.string().url().default('http://127.0.0.1:8081'),
  KEYS_FILE: z.string().min(1).default('config/keys.yaml'),
  GATEWAY_CONFIG: z.string().min(1).default('config/gateway.yaml'),
  /** The shared Redis (docs/operating.md): at most one topology; checked by parseRedisTopology. */
  REDIS_URL: z.string().optional(),
  REDIS_CLUSTER_NODES: z.string().optional(),
  REDIS_SENTINELS: z.string().optional(),
  REDIS_SENTINEL_MASTER: z.string().optional(),
  REDIS_USERNAME: z.string().optional(),
  REDIS_PASSWORD: z.string().optional(),
  REDIS_TLS: z.string().optional(),
  REDIS_TLS_CA_FILE: z.string().optional(),
  KEY_STORE: z.enum(['file', 'redis']).default('file'),
  CURSOR_SECRET: base64url32.optional(),
  /** Comma-separated secrets still accepted for decryption while cursors issued under them live. */
  CURSOR_PREVIOUS_SECRETS: z
    .string()
    .optional()
    .transform((v) => (v ? v.split(',').map((s) => s.trim()).filter(Boolean) : []))
    .pipe(z.array(base64url32)),
  CURSOR_TTL_SECONDS: positiveInt(3600),
  /** Signs the caller identity sent to the insights service (required when insights is configured). */
  INSIGHTS_IDENTITY_SECRET: base64url32.optional(),
  UPSTREAM_TIMEOUT_MS: positiveInt(10000),
  /** A connection whose written answers make no progress to the client for this long is closed. */
  WRITE_STALL_TIMEOUT_MS: positiveInt(30000),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  /** A Redis command unanswered after this long fails; counting falls back to the instance. */
  REDIS_COMMAND_TIMEOUT_MS: positiveInt(500),
  /** The ops listener (/metrics, /healthz, /readyz); unset: off. */
  OPS_PORT: z.coerce.number({ invalid_type_error: 'must be a port number' }).int().min(0).max(65535).optional(),
  OPS_HOST: z.string().min(1).default('127.0.0.1'),
  ADMIN_PORT: port(9090),
  ADMIN_HOST: z.string().min(1).default('127.0.0.1'),
  /** Host names the admin listener answers besides loopback, its own address and ADMIN_HOST (comma-separated). */
  ADMIN_ALLOWED_HOSTS: z.string().default('').transform((v) => v.split(',').map((h) => h.trim()).filter(Boolean)),
  ADMIN_TOKEN: z
    .string()
    .min(16, 'must be at least 16 characters')
    // A compose tool that does not expand `${ADMIN_TOKEN:-}` passes it through literally: that
    // string must never become the admin API's token.
    .refine((v) => !v.includes('${'), { message: 'contains "${": an unexpanded variable reference, not a token' })
    // Guessable tokens are refused (issue 23): the value is never printed, only why.
    .refine((v) => estimatedBits(v) >= MIN_TOKEN_BITS, { message: `too weak: at least ${MIN_TOKEN_BITS} bits, e.g. openssl rand -hex 32` })
    .optional(),
  /**
   * Set by the primary of GATEWAY_WORKERS > 1 on each worker, not by operators: "1" on the one worker
   * that serves the admin listener (console sessions and the refused-authentication budget live in
   * a process), "0" on the others.
   */
  GATEWAY_ADMIN_WORKER: z.enum(['0', '1']).optional(),
  /** Processes serving the public port: a number, or `auto` (one per core). More than one needs a shared Redis. */
  GATEWAY_WORKERS: z
    .union([z.literal('auto'), z.coerce.number({ invalid_type_error: 'must be a number or auto' }).int('must be a whole number or auto').min(1, 'must be at least 1, or auto').max(256, 'must be at most 256')], {
      errorMap: () => ({ message: 'must be a whole number from 1 to 256, or auto' }),
    })
    .default(1),
  /** Audit log retention (Redis key store): the oldest entries go once either bound is passed. */
  AUDIT_RETENTION_DAYS: positiveInt(400),
  AUDIT_MAX_ENTRIES: positiveInt(1_000_000),
  /** YAML list of named operator tokens (name, token_sha256, role); hot-reloaded. */
  ADMIN_TOKENS_FILE: z.string().min(1).optional(),
  /** Usage history is counted in memory and written to its store this often (ms); a crash loses at most this much. */
  USAGE_FLUSH_MS: positiveInt(2000),
  /** `off` stops recording usage history (reports keep what was recorded); for comparison in the bench. */
  USAGE_HISTORY: z.enum(['on', 'off']).default('on'),
  /** Quota notifications and key events are POSTed here, signed per Standard Webhooks; unset: off. */
  WEBHOOK_URL: z.string().url().refine((u) => /^https?:\/\//.test(u), 'must be an http:// or https:// URL').optional(),
  WEBHOOK_SECRET: webhookSecret.optional(),
  /** A delivery unanswered after this long counts as failed (and is retried). */
  WEBHOOK_TIMEOUT_MS: positiveInt(10_000),
  /** First retry wait; doubled per attempt up to WEBHOOK_RETRY_MAX_MS, with jitter. */
  WEBHOOK_RETRY_BASE_MS: positiveInt(5_000),
  WEBHOOK_RETRY_MAX_MS: positiveInt(3_600_000),
  /** An event still failing this long after it was queued goes to the dead letters (default 24 h). */
  WEBHOOK_GIVE_UP_AFTER_MS: positiveInt(86_400_000),
  /** Deliveries in flight at once per instance. */
  WEBHOOK_CONCURRENCY: positiveInt(4),
  /** How often due retries and abandoned deliveries are looked for. */
  WEBHOOK_POLL_MS: positiveInt(1_000),
  /** Dead letters kept at most (the oldest dropped past it), and for how long (default 30 days). */
  WEBHOOK_DEAD_MAX: positiveInt(10_000),
  WEBHOOK_DEAD_MAX_AGE_MS: positiveInt(30 * 86_400_000),
  /**
   * Key ids that get per-key metric series (`gateway_key_requests_total{key_id}`): comma-separated,
   * or `*` for every key (small deployments only: one series per key and status). Unset: none.
   */
  METRICS_KEY_IDS: z
    .string()
    .optional()
    .transform((v) => (v === undefined ? ('none' as const) : v.trim() === '*' ? ('all' as const) : new Set(v.split(',').map((s) => s.trim()).filter(Boolean))))
    .refine((v) => typeof v === 'string' || [...v].every((id) => /^[A-Za-z0-9._-]{1,64}$/.test(id)), { message: 'must be * or a comma-separated list of key ids' }),
  TRUST_PROXY: z
    .string()
    .optional()
    .refine((v) => v === undefined || !/^\s*(true|false|\d+)\s*$/i.test(v), {
      message: 'must list the CIDRs of trusted proxies; blanket trust (true or a hop count) is refused',
    })
    .transform((v) => (v ? v.split(',').map((s) => s.trim()).filter(Boolean) : []))
    .refine((list) => list.every((entry) => ipaddr.isValidCIDR(entry) || ipaddr.isValid(entry)), {
      message: 'every entry must be an IP address or a CIDR such as 10.0.0.0/8',
    })
    .refine((list) => list.every((entry) => !entry.endsWith('/0')), {
      message: 'a /0 range trusts every address (blanket trust is refused); list the proxies',
    }),
});

export type Env = z.infer<typeof EnvSchema> & {
  /** The shared Redis the variables chose; undefined: counters in memory and no Redis key store. */
  readonly redis?: RedisTopology;
  /** Traces (the standard OTEL_* variables, otel-env.ts); undefined: off, nothing loaded. */
  readonly tracing?: TracingConfig;
};

/** Combinations that each variable alone cannot judge. */
function checkCombinations(env: Env): void {
  if (env.KEY_STORE === 'redis' && !env.redis) {
    throw new ConfigError('environment variable KEY_STORE: "redis" needs a Redis (REDIS_URL, REDIS_CLUSTER_NODES or REDIS_SENTINELS)');
  }
  if (env.GATEWAY_WORKERS !== 1 && !env.redis) {
    // Checked for `auto` too, whatever the core count: a configuration valid on one machine only is a trap.
    throw new ConfigError('environment variable GATEWAY_WORKERS: more than one worker needs a shared Redis (REDIS_URL, REDIS_CLUSTER_NODES or REDIS_SENTINELS)');
  }
  if (env.WEBHOOK_URL && !env.WEBHOOK_SECRET) {
    throw new ConfigError('environment variable WEBHOOK_SECRET: needed with WEBHOOK_URL (whsec_ + base64 of 24 to 64 random bytes)');
  }
  if (env.WEBHOOK_SECRET && !env.WEBHOOK_URL) {
    throw new ConfigError('environment variable WEBHOOK_URL: needed with WEBHOOK_SECRET (where to send events)');
  }
  // ADMIN_TOKEN / ADMIN_TOKENS_FILE with the keys file: the admin listener serves the console alone,
  // read-only (the admin API manages the Redis key store).
}

/** Parses the process environment once, at start-up. Throws a one-line `ConfigError`. */
export function parseEnv(source: NodeJS.ProcessEnv = process.env): Env {
  // An empty variable means "unset": operators blank a line in an env file to get the default.
  const cleaned = Object.fromEntries(Object.entries(source).filter(([, v]) => v !== undefined && v !== ''));
  const parsed = EnvSchema.safeParse(cleaned);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new ConfigError(`environment variable ${String(issue.path[0])}: ${issue.message}`);
  }
  const redis = parseRedisTopology(parsed.data);
  const tracing = parseTracingEnv(cleaned);
  const env: Env = { ...parsed.data, ...(redis ? { redis } : {}), ...(tracing ? { tracing } : {}) };
  checkCombinations(env);
  return Object.freeze(env);
}

/** Whether KEY_STORE was given (not defaulted): the keys CLI edits KEYS_FILE only when told so or when no Redis is set. */
export function keyStoreGiven(source: NodeJS.ProcessEnv = process.env): boolean {
  return source.KEY_STORE !== undefined && source.KEY_STORE !== '';
}
