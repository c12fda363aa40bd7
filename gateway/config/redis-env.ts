import fs from 'node:fs';
import { ConfigError } from './config-error';

/** One `host:port` of a cluster seed node or a sentinel. */
export interface HostPort {
  readonly host: string;
  readonly port: number;
}

/** What every topology shares: credentials, TLS and the command timeout. */
interface Common {
  readonly username?: string;
  readonly password?: string;
  /** TLS to the data nodes; `ca` is the PEM text of REDIS_TLS_CA_FILE (undefined: the system's CAs). */
  readonly tls?: { readonly ca?: string };
  readonly commandTimeoutMs: number;
}

/**
 * The shared Redis the environment chose (docs/operating.md), or none. `variable` is what a refusal
 * names; `where` is a printable location without credentials (the URL's password never leaves here).
 */
export type RedisTopology =
  | (Common & { readonly kind: 'single'; readonly url: string; readonly where: string; readonly variable: 'REDIS_URL' })
  | (Common & { readonly kind: 'cluster'; readonly nodes: readonly HostPort[]; readonly where: string; readonly variable: 'REDIS_CLUSTER_NODES' })
  | (Common & {
      readonly kind: 'sentinel';
      readonly sentinels: readonly HostPort[];
      readonly masterName: string;
      readonly where: string;
      readonly variable: 'REDIS_SENTINELS';
    });

export interface RedisEnv {
  REDIS_URL?: string | undefined;
  REDIS_CLUSTER_NODES?: string | undefined;
  REDIS_SENTINELS?: string | undefined;
  REDIS_SENTINEL_MASTER?: string | undefined;
  REDIS_USERNAME?: string | undefined;
  REDIS_PASSWORD?: string | undefined;
  REDIS_TLS?: string | undefined;
  REDIS_TLS_CA_FILE?: string | undefined;
  REDIS_COMMAND_TIMEOUT_MS: number;
}

const fail = (variable: string, message: string): never => {
  throw new ConfigError(`environment variable ${variable}: ${message}`);
};

/** `host:port,host:port` → list; a bad entry names its position (never the whole value). */
function hostPorts(variable: string, text: string): HostPort[] {
  const entries = text.split(',').map((s) => s.trim()).filter(Boolean);
  if (!entries.length) fail(variable, 'must list host:port entries separated by commas');
  return entries.map((entry, index) => {
    const m = /^(\[[0-9a-fA-F:.]+\]|[^:\s]+):(\d{1,5})$/.exec(entry);
    const port = m ? Number(m[2]) : NaN;
    if (!m || port < 1 || port > 65535) fail(variable, `entry ${index + 1} must be host:port (e.g. 10.0.0.5:6379)`);
    return { host: m![1]!.replace(/^\[|\]$/g, ''), port };
  });
}

function readCa(file: string): string {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    return fail('REDIS_TLS_CA_FILE', `cannot read ${file} (${(err as NodeJS.ErrnoException).code ?? 'unreadable'})`);
  }
  if (!text.includes('-----BEGIN CERTIFICATE-----')) fail('REDIS_TLS_CA_FILE', `${file} holds no PEM certificate`);
  return text;
}

/**
 * Chooses the topology from the environment: at most one of REDIS_URL, REDIS_CLUSTER_NODES and
 * REDIS_SENTINELS; credentials in the URL for REDIS_URL, in REDIS_USERNAME / REDIS_PASSWORD for the
 * others; TLS by `rediss://` or REDIS_TLS=1. Throws a one-line ConfigError that never holds a password.
 */
export function parseRedisTopology(env: RedisEnv): RedisTopology | undefined {
  const chosen = (['REDIS_URL', 'REDIS_CLUSTER_NODES', 'REDIS_SENTINELS'] as const).filter((v) => env[v] !== undefined);
  if (chosen.length > 1) fail(chosen[1]!, `only one Redis topology may be set, and ${chosen[0]} is set too`);
  if (env.REDIS_SENTINEL_MASTER !== undefined && env.REDIS_SENTINELS === undefined) fail('REDIS_SENTINEL_MASTER', 'needs REDIS_SENTINELS');
  if (env.REDIS_TLS !== undefined && !['0', '1'].includes(env.REDIS_TLS)) fail('REDIS_TLS', 'must be 1 (TLS) or 0');
  if (!chosen.length) {
    for (const v of ['REDIS_USERNAME', 'REDIS_PASSWORD', 'REDIS_TLS_CA_FILE', 'REDIS_TLS'] as const) {
      if (env[v] !== undefined) fail(v, 'needs a Redis: REDIS_URL, REDIS_CLUSTER_NODES or REDIS_SENTINELS');
    }
    return undefined;
  }
  const ca = env.REDIS_TLS_CA_FILE !== undefined ? readCa(env.REDIS_TLS_CA_FILE) : undefined;
  const commandTimeoutMs = env.REDIS_COMMAND_TIMEOUT_MS;

  if (env.REDIS_URL !== undefined) {
    let url: URL;
    try {
      url = new URL(env.REDIS_URL);
    } catch {
      return fail('REDIS_URL', 'must be redis://[user:password@]host:port[/db] or rediss://… for TLS');
    }
    if (url.protocol !== 'redis:' && url.protocol !== 'rediss:') fail('REDIS_URL', `must start with redis:// or rediss:// (TLS), not ${url.protocol}//`);
    if (!url.hostname) fail('REDIS_URL', 'names no host');
    if (url.pathname.length > 1 && !/^\/\d{1,2}$/.test(url.pathname)) fail('REDIS_URL', 'the path must be a database number such as /0');
    for (const v of ['REDIS_USERNAME', 'REDIS_PASSWORD'] as const) {
      if (env[v] !== undefined) fail(v, 'with REDIS_URL the credentials go in the URL (redis://user:password@host:port)');
    }
    if (env.REDIS_TLS !== undefined) fail('REDIS_TLS', 'with REDIS_URL, TLS is chosen by the scheme (rediss://)');
    const tls = url.protocol === 'rediss:';
    if (ca !== undefined && !tls) fail('REDIS_TLS_CA_FILE', 'is for TLS; use a rediss:// URL');
    return {
      kind: 'single',
      url: env.REDIS_URL,
      where: `${url.hostname}:${url.port || '6379'}`,
      variable: 'REDIS_URL',
      commandTimeoutMs,
      ...(tls ? { tls: ca !== undefined ? { ca } : {} } : {}),
    };
  }

  const tls = env.REDIS_TLS === '1';
  if (ca !== undefined && !tls) fail('REDIS_TLS_CA_FILE', 'is for TLS; set REDIS_TLS=1');
  const common = {
    commandTimeoutMs,
    ...(env.REDIS_USERNAME !== undefined ? { username: env.REDIS_USERNAME } : {}),
    ...(env.REDIS_PASSWORD !== undefined ? { password: env.REDIS_PASSWORD } : {}),
    ...(tls ? { tls: ca !== undefined ? { ca } : {} } : {}),
  };
  if (env.REDIS_USERNAME !== undefined && env.REDIS_PASSWORD === undefined) fail('REDIS_USERNAME', 'needs REDIS_PASSWORD');
  if (env.REDIS_CLUSTER_NODES !== undefined) {
    const nodes = hostPorts('REDIS_CLUSTER_NODES', env.REDIS_CLUSTER_NODES);
    return { kind: 'cluster', nodes, where: nodes.map((n) => `${n.host}:${n.port}`).join(','), variable: 'REDIS_CLUSTER_NODES', ...common };
  }
  const sentinels = hostPorts('REDIS_SENTINELS', env.REDIS_SENTINELS!);
  if (env.REDIS_SENTINEL_MASTER === undefined) fail('REDIS_SENTINELS', 'needs REDIS_SENTINEL_MASTER (the monitored master\'s name)');
  return {
    kind: 'sentinel',
    sentinels,
    masterName: env.REDIS_SENTINEL_MASTER!,
    where: `master ${env.REDIS_SENTINEL_MASTER} via ${sentinels.map((n) => `${n.host}:${n.port}`).join(',')}`,
    variable: 'REDIS_SENTINELS',
    ...common,
  };
}

/** The topology of one Redis at `url` (tools and benchmarks that take a URL). */
export const singleRedis = (url: string, commandTimeoutMs = 500): RedisTopology =>
  parseRedisTopology({ REDIS_URL: url, REDIS_COMMAND_TIMEOUT_MS: commandTimeoutMs })!;
