import type { Logger } from 'pino';
import { runAs, type Actor } from '../audit/actor';
import type { KeyAdmin } from '../keys/key-admin';
import type { KeyStore } from '../keys/key-record';
import type { LeakMarker } from './leak-feedback';

/** Who the audit log names for a reported leak. */
export const GITHUB_REPORTER: Actor = { name: 'leaks:github', channel: 'leaks' };

/** With the Redis key store: the key admin marks the key and applies `leaks.on_leak` (hot-reloaded with the gateway config). */
export function keyAdminMarker(admin: KeyAdmin): LeakMarker {
  return (hash, report) => runAs(GITHUB_REPORTER, () => admin.markLeaked(hash, report));
}

/**
 * With the keys file as the key store, the gateway never writes the file (it is the operator's):
 * a reported value is looked up (current, or previous within its grace) and answered, and a
 * confirmed leak is logged at `error` with the key id and the report's url, for the operator to
 * roll the key in the file. Nothing else changes.
 */
export function fileStoreMarker(store: KeyStore, logger: Logger): LeakMarker {
  return async (hash, report) => {
    const lookup = await store.lookup(hash);
    if (lookup.kind === 'unavailable') throw new Error('key store unavailable');
    if (lookup.kind !== 'found') return false;
    logger.error({ key_id: lookup.record.id, url: report.url ?? null, previous: lookup.previous === true }, 'key value reported leaked: roll it in the keys file (the file store is not changed by the gateway)');
    return true;
  };
}
