import { closeSync, fsyncSync, openSync, renameSync, rmSync, writeSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import type { RedisClient } from '../redis/connect';
import { dump } from 'js-yaml';
import { ConfigError } from '../config/config-error';
import { DEMO_KEY_HASHES, isDemoKey } from './demo-keys';
import type { KeyEntry } from './key-entry';
import { parseStoredKey, redisKeys, type StoredKey } from './redis-layout';

/** Records read per round trip while exporting. */
const EXPORT_BATCH = 1000;

/**
 * A stored record as a keys-file entry, every field as stored: the rotation (also one whose grace
 * has passed: the store keeps it, to say whose value a late caller used) with its end as a date,
 * exact to the millisecond, and the store's creation and update times.
 */
function toEntry(stored: StoredKey): KeyEntry {
  const { previous_key_sha256: previous, previous_expires_at: until, ...fields } = stored;
  return { ...fields, ...(previous !== undefined && until !== undefined ? { previous_key_sha256: previous, previous_key_expires_at: new Date(until).toISOString() } : {}) };
}

/**
 * Writes `text` to `file` through a fresh temporary file beside it: created exclusively (O_EXCL:
 * never an existing file, never through a symlink someone left there) with mode 0600 under a name
 * nobody can guess, then renamed over `file` (atomic on one file system). A failed export leaves
 * `file` as it was.
 */
function writeExclusively(file: string, text: string): void {
  const temp = `${file}.${randomBytes(8).toString('hex')}.partial`;
  const fd = openSync(temp, 'wx', 0o600);
  try {
    writeSync(fd, text);
    fsyncSync(fd);
    closeSync(fd);
    renameSync(temp, file);
  } catch (err) {
    try {
      closeSync(fd);
    } catch { /* already closed */ }
    rmSync(temp, { force: true });
    throw err;
  }
}

/**
 * `keys export FILE`: every record of the Redis key store as a YAML keys file, every field as
 * stored, hashes only (the store holds no key value), which `keys import FILE` restores exactly and
 * `KEYS_FILE` can serve. Returns the number of records.
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
      if (stored) keys.push(toEntry(stored));
    }
  }
  writeExclusively(file, `# Export of the Redis key store, ${new Date(now).toISOString()}: hashes only. Restore with keys import.\n${dump({ ...(accounts.length ? { accounts } : {}), keys }, { lineWidth: -1, flowLevel: 3 })}`);
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
