import type { RedisTopology } from '../config/redis-env';

/** TLS verification failures of node's tls module: the server answered with a certificate we do not trust. */
const UNTRUSTED_CERTIFICATE = new Set([
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'CERT_UNTRUSTED',
  'CERT_REJECTED',
  'CERT_SIGNATURE_FAILURE',
  'ERR_TLS_CERT_ALTNAME_INVALID',
]);

/** The code of the error connect.ts reports when every sentinel answered that it knows no such master. */
export const UNKNOWN_MASTER = 'GATEWAY_SENTINEL_UNKNOWN_MASTER';

const credentialsVariable = (t: RedisTopology): string => (t.kind === 'single' ? 'REDIS_URL' : t.username !== undefined ? 'REDIS_USERNAME / REDIS_PASSWORD' : 'REDIS_PASSWORD');
const tlsVariable = (t: RedisTopology): string => (t.tls?.ca !== undefined ? 'REDIS_TLS_CA_FILE' : t.kind === 'single' ? 'REDIS_URL' : 'REDIS_TLS');

const connect = (line: string): Refusal => ({ line, during: 'connect' });
const command = (line: string): Refusal => ({ line, during: 'command' });

/** The first word of a Redis error reply (`WRONGPASS`, `MOVED`, `ERR`…), or ''. */
const replyCode = (message: string): string => /^([A-Z]+)\b/.exec(message)?.[1] ?? '';

/**
 * A refusal: the one line naming the variable to fix, and whether it came while connecting
 * (credentials, TLS: the client cannot become ready) or as the reply to a command (ACL, MOVED).
 */
export interface Refusal {
  readonly line: string;
  readonly during: 'connect' | 'command';
}

/**
 * A Redis that answers but refuses this configuration, as a Refusal, or
 * undefined for a failure that is an outage (connection refused or reset, timeout, a failover in
 * progress). Never quotes a password: server replies are named by their code only, except NOPERM
 * whose text names the command or key the ACL user lacks (Redis never echoes credentials there).
 */
export function refusalOf(err: unknown, topology: RedisTopology): Refusal | undefined {
  const e = err as { message?: unknown; code?: unknown; lastNodeError?: unknown } | undefined;
  if (!e) return undefined;
  const code = typeof e.code === 'string' ? e.code : '';
  const message = typeof e.message === 'string' ? e.message : '';
  if (code === UNKNOWN_MASTER && topology.kind === 'sentinel') {
    return connect(`REDIS_SENTINEL_MASTER: no sentinel knows a master named "${topology.masterName}" (asked ${topology.sentinels.map((n) => `${n.host}:${n.port}`).join(', ')})`);
  }
  if (UNTRUSTED_CERTIFICATE.has(code)) {
    return connect(`${tlsVariable(topology)}: the Redis server's TLS certificate is not trusted (${code}) at ${topology.where}`);
  }
  if (/wrong version number|packet length too long|unknown protocol/i.test(message) || code === 'ERR_SSL_WRONG_VERSION_NUMBER') {
    return connect(`${tlsVariable(topology)}: TLS was asked for but ${topology.where} does not speak TLS on that port`);
  }
  // ioredis wraps a cluster's failure to read its slots; the node's own reply says why.
  if (e.lastNodeError) return refusalOf(e.lastNodeError, topology);
  switch (replyCode(message)) {
    case 'WRONGPASS':
      return connect(`${credentialsVariable(topology)}: Redis refused the credentials (WRONGPASS) at ${topology.where}`);
    case 'NOAUTH':
      return connect(`${credentialsVariable(topology)}: Redis requires a password and none was given (NOAUTH) at ${topology.where}`);
    case 'NOPERM':
      return command(`${topology.kind === 'single' ? 'REDIS_URL' : 'REDIS_USERNAME'}: the Redis ACL user lacks a permission the gateway needs (${message.split('\n')[0]!.slice(0, 160)})`);
    case 'MOVED':
    case 'ASK':
      return topology.kind === 'cluster'
        ? undefined // ioredis follows redirections itself; one that surfaces is a slot migration in progress
        : command(`${topology.variable}: ${topology.where} is a node of a Redis Cluster (MOVED); give the nodes as REDIS_CLUSTER_NODES`);
    case 'CROSSSLOT':
      return command(`${topology.variable}: Redis refused a command spanning cluster slots (CROSSSLOT) at ${topology.where}`);
    case 'ERR':
      if (/cluster support disabled/i.test(message)) return connect(`REDIS_CLUSTER_NODES: ${topology.where} is not a Redis Cluster (cluster support disabled); use REDIS_URL`);
      if (/called without any password configured/i.test(message)) return undefined; // a password the server does not need: harmless
      return undefined;
    default:
      return undefined;
  }
}
