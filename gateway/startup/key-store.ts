/**
 * The key store: the keys file (read at start-up, replaced whole on reload, each reload's changes
 * audited in memory) or Redis (read through a cache kept fresh by the change channel, its epoch
 * watched so a store lost by Redis is noticed).
 */
import type { Logger } from 'pino';
import { recordReload } from '../keys/keys-file-reload-audit';
import { createMemoryAuditLog, type MemoryAuditLog } from '../audit/memory-audit-log';
import type { Env } from '../config/env';
import type { GatewayConfig } from '../config/gateway-config';
import type { Actor } from '../audit/actor';
import { createFileKeyStore, indexFileKeys, type FileKeyIndex, type FileKeyStore } from '../keys/file-key-store';
import type { KeyStore } from '../keys/key-record';
import { watchKeyStoreEpoch } from '../keys/key-store-epoch';
import type { FileKey } from '../keys/keys-file';
import { createRedisKeyStore, type RedisKeyStore } from '../keys/redis-key-store';
import type { Metrics } from '../ops/metrics';
import { createSubscriber } from '../redis/subscriber';
import { inSlices } from '../slices';
import type { SharedRedis } from './redis-and-counters';

/** The keys file as the key store. */
export interface FileKeys {
  readonly file: string;
  readonly store: FileKeyStore;
  /** What each reload added, changed or removed (the console shows it). */
  readonly audit: MemoryAuditLog;
  /** The keys as last read. */
  current(): readonly FileKey[];
  /**
   * A reload's keys, indexed a slice at a time. The function it resolves to swaps them in (one
   * synchronous step: served from then on) and audits what changed, a slice at a time.
   */
  prepare(next: readonly FileKey[]): Promise<() => Promise<void>>;
}

export interface KeyStores {
  readonly keyStore: KeyStore;
  readonly file?: FileKeys;
  readonly redisStore?: RedisKeyStore;
}

/** Keys indexed, or compared for the audit, in one step of a slice. */
const INDEX_SLICE = 500;
const AUDIT_SLICE = 50;

/**
 * recordReload, a slice at a time (a 100,000-key file takes about a second of this thread): the keys
 * of the new file in its order, each against the record of the same id before, then those removed.
 * Within a slice the entries are in id order.
 */
async function auditReload(audit: MemoryAuditLog, actor: Actor, before: readonly FileKey[], after: readonly FileKey[]): Promise<void> {
  const old = new Map<string, FileKey>();
  await inSlices(Math.ceil(before.length / INDEX_SLICE), (i) => {
    for (const key of before.slice(i * INDEX_SLICE, (i + 1) * INDEX_SLICE)) old.set(key.record.id, key);
  });
  await inSlices(Math.ceil(after.length / AUDIT_SLICE), (i) => {
    const slice = after.slice(i * AUDIT_SLICE, (i + 1) * AUDIT_SLICE);
    const previous = slice.flatMap((key) => old.get(key.record.id) ?? []);
    for (const key of slice) old.delete(key.record.id);
    recordReload(audit, actor, previous, slice);
  });
  const removed = [...old.values()];
  await inSlices(Math.ceil(removed.length / AUDIT_SLICE), (i) => void recordReload(audit, actor, removed.slice(i * AUDIT_SLICE, (i + 1) * AUDIT_SLICE), []));
}

function fileKeyStore(file: string, keys: readonly FileKey[]): FileKeys {
  const store = createFileKeyStore(keys);
  const audit = createMemoryAuditLog();
  let current = keys;
  return {
    file,
    store,
    audit,
    current: () => current,
    async prepare(next) {
      const index: FileKeyIndex = new Map();
      await inSlices(Math.ceil(next.length / INDEX_SLICE), (i) => void indexFileKeys(next.slice(i * INDEX_SLICE, (i + 1) * INDEX_SLICE), index));
      return () => {
        store.replaceIndex(index);
        const before = current;
        current = next;
        // With the keys file, a reload is the change: what it added, changed or removed is audited.
        return auditReload(audit, { name: `file:${file}`, channel: 'keys_file' }, before, next);
      };
    },
  };
}

function redisKeyStore(env: Env, config: GatewayConfig, redis: SharedRedis, logger: Logger, metrics: Metrics): RedisKeyStore {
  const epoch = watchKeyStoreEpoch(redis.client, logger, { onChange: (health) => metrics.keyStoreLost.set(health === 'lost' ? 1 : 0) });
  const subscriber = createSubscriber(redis.topology, redis.client, logger, redis.health);
  redis.adopt(subscriber);
  return createRedisKeyStore(redis.client, subscriber, config, logger, {
    onLookup: (result) => metrics.tally.keyCache.add(result),
    onError: (err) => redis.health.report(err),
    epoch,
    // Two reads (pointer, record), each bounded by the command timeout.
    ...(redis.topology.kind === 'cluster' ? { deadlineMs: 2 * env.REDIS_COMMAND_TIMEOUT_MS } : {}),
  });
}

/** `fileKeys` when the keys file is the store (KEY_STORE=file), else the Redis store (`redis` is then set: env.ts requires it). */
export function startKeyStore(env: Env, config: GatewayConfig, fileKeys: readonly FileKey[] | undefined, redis: SharedRedis | undefined, logger: Logger, metrics: Metrics): KeyStores {
  if (fileKeys) {
    const file = fileKeyStore(env.KEYS_FILE, fileKeys);
    return { keyStore: file.store, file };
  }
  const redisStore = redisKeyStore(env, config, redis!, logger, metrics);
  return { keyStore: redisStore, redisStore };
}
