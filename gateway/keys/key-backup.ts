import { writeFileSync, renameSync } from 'node:fs';
import type { RedisClient } from '../redis/connect';
import { dump } from 'js-yaml';
import { ConfigError } from '../config/config-error';
import { DEMO_KEY_HASHES, isDemoKey } from './demo-keys';
import type { KeyEntry } from './keys-file';
import { parseStoredKey, redisKeys, type StoredKey } from './redis-layout';

/** Records read per round trip while exporting. */
const EXPORT_BATCH = 1000;

/** A stored record as a keys-file entry: the same fields, a running rotation with its end as a date. */
function toEntry(stored: StoredKey, nowMs: number): KeyEntry {
  const { created_at: _c, updated_at: _u, previous_key_sha256: previous, previous_expires_at: until, ...fields } = stored;
  const rotating = previous !== undefined && until !== undefined && until > nowMs;
  return { ...fields, ...(rotating ? { previous_key_sha256: previous, previous_key_expires_at: new Date(until).toISOString() } : {}) };
}

/**
 * `keys export FILE`: every record of the Redis key store as a YAML keys file, hashes only (the
 * store holds no key value), which `keys import FILE` restores and `KEYS_FILE` can serve. Written
 * to a temporary file and renamed, so a failed export never leaves half a backup under the name.
 * Returns the number of records.
 */
export async function exportKeys(redis: RedisClient, file: string, accounts: readonly unknown[] = []): Promise<number> {
  const ids = (await redis.smembers(redisKeys.ids)).sort();
  const now = Date.now();
  const keys: KeyEntry[] = [];
  for (let i = 0; i < ids.length; i += EXPORT_BATCH) {
    const batch = ids.slice(i, i + EXPORT_BATCH);
    // One GET each (not MGET): records may sit in different cluster slots.
    const records = await Promise.all(batch.map((id) => redis.get(redisKeys.record(id))));
    for (const json of records) {
      const stored = parseStoredKey(json);
      if (stored) keys.push(toEntry(stored, now));
    }
  }
  const text = `# Export of the Redis key store, ${new Date(now).toISOString()}: hashes only. Restore with keys import.\n${dump({ ...(accounts.length ? { accounts } : {}), keys }, { lineWidth: -1, flowLevel: 3 })}`;
  const partial = `${file}.partial`;
  writeFileSync(partial, text, { mode: 0o600 });
  renameSync(partial, file);
  return keys.length;
}

/**
 * Refuses a file holding demo keys (their values are published in the README), naming them; one
 * line. `keys import --allow-demo` skips this check (for trying the gateway with Redis).
 */
export function refuseDemoKeys(file: string, entries: readonly KeyEntry[]): void {
  const demo = entries.filter((e) => isDemoKey(e.key_sha256) || (e.previous_key_sha256 !== undefined && isDemoKey(e.previous_key_sha256)));
  if (!demo.length) return;
  const names = demo.map((e) => (DEMO_KEY_HASHES.get(e.key_sha256) === e.id || !DEMO_KEY_HASHES.has(e.key_sha256) ? e.id : `${e.id} (the demo key ${DEMO_KEY_HASHES.get(e.key_sha256)})`));
  throw new ConfigError(`${file}: holds demo keys, whose values are published in the README: ${names.join(', ')}; nothing imported (remove them, or pass --allow-demo to import them anyway)`);
}
