import { ApiError } from '../errors';
import type { LeakAction } from '../config/gateway-config';
import type { KeyAdmin, KeyAdminContext } from './key-admin-types';
import { MAX_LEAK_URL } from './record-bounds';
import { heldReasons, LEAKED, withPauseReasons } from './pause-reasons';
import { liveHashes, parseStoredKey, redisKeys, type StoredKey } from './redis-layout';

/**
 * The record once `hash` (one of its live values) is reported leaked: the mark (when, where, which
 * value) and what `action` does. A value already reported changes nothing (the same report twice).
 */
export function leakedRecord(s: StoredKey, hash: string, url: string | undefined, action: LeakAction, nowIso: string): StoredKey {
  if (s.leaked_key_sha256?.includes(hash)) return s;
  const { leak_url: _u, ...rest } = s;
  const marked: StoredKey = {
    ...rest,
    leaked_at: nowIso,
    ...(url !== undefined ? { leak_url: url } : {}),
    leaked_key_sha256: [...(s.leaked_key_sha256 ?? []), hash],
  };
  if (action === 'end_value') return { ...marked, value_ended_at: s.value_ended_at ?? nowIso };
  if (action === 'pause') return pausedForLeak(marked);
  return marked;
}

/** Paused with the reason `leaked` added to its set (a revoked key stays revoked). */
const pausedForLeak = (s: StoredKey): StoredKey => withPauseReasons(s, [...heldReasons(s), LEAKED]);

/** Whether a roll of `s` gives its previous value a grace: never when the value rolled away was reported leaked. */
export const rollGrants = (s: StoredKey): boolean => !s.leaked_key_sha256?.includes(s.key_sha256);

/** The record without its leak mark (a roll clears it; the audit log keeps the history). */
export function withoutLeak(s: StoredKey): StoredKey {
  const { leaked_at: _a, leak_url: _u, value_ended_at: _e, leaked_key_sha256: _h, ...rest } = s;
  return rest;
}

/**
 * Leak reports for the key admin: a reported hash that is a live value of a record (current, or
 * previous within its grace) marks it, in the writer's one audited compare-and-set; an ended value
 * keeps its pointer, so the same report again is still recognised and changes nothing more (no
 * audit entry, no event). What a leak does is `leaks.on_leak` of the gateway config as it is now
 * (hot-reloaded). The actor is the reporting channel's (`runAs`).
 */
export function keyAdminLeaks(ctx: KeyAdminContext): Pick<KeyAdmin, 'markLeaked'> {
  return {
    async markLeaked(hash, report) {
      const id = await ctx.redis.get(redisKeys.byHash(hash));
      if (id === null) return false;
      const stored = parseStoredKey(await ctx.redis.get(redisKeys.record(id)));
      if (!stored || !liveHashes(stored, Date.now()).includes(hash)) return false;
      if (stored.leaked_key_sha256?.includes(hash)) return true;
      let issued = true;
      const action = ctx.config().onLeak ?? 'end_value';
      // A location longer than a record keeps is left out (the leak is still marked).
      const url = report.url !== undefined && report.url.length <= MAX_LEAK_URL ? report.url : undefined;
      const now = new Date().toISOString();
      let done;
      try {
        done = await ctx.writer.update(id, 'leak', (s) => {
          issued = liveHashes(s, Date.now()).includes(hash);
          return issued ? leakedRecord(s, hash, url, action, now) : s;
        });
      } catch (err) {
        if (err instanceof ApiError && err.status === 404) return false; // deleted meanwhile
        throw err;
      }
      const { after, changes } = done;
      if (!issued) return false;
      if (Object.keys(changes).length) {
        await ctx.emit('key.leaked', { key_id: id, account_id: after.account ?? null, url: url ?? null, action });
      }
      return true;
    },
  };
}
