import { refuseDemoKeys } from './key-backup';
import { generateKeyValue, sha256Hex } from './key-format';
import type { KeyAdmin, KeyAdminContext } from './key-admin-types';
import { ApiError } from '../errors';
import { ANY_ADDRESS } from './address-list';
import { addressesOf } from './key-entry';
import { checked, CreateSchema, notAllowed, overrides, parseInput, PauseSchema, RollSchema, SetSchema } from './key-input';
import { eventFields, keyView } from './key-view';
import { readKeysFile } from './keys-file';
import { forgetUsage } from '../usage/forget-usage';
import type { StoredKey } from './redis-layout';

type Changes = Pick<KeyAdmin, 'create' | 'set' | 'pause' | 'settle' | 'revoke' | 'roll' | 'delete' | 'import'>;

/** The record after a `set`: the fields the input names changed, `null` removing expiry or note. */
function applySet(s: StoredKey, fields: ReturnType<typeof parseSet>['fields'], expiresAt: string | null | undefined, note: string | null | undefined): StoredKey {
  const { address: _a, expires_at: _e, note: _n, ...kept } = s;
  return {
    ...kept,
    ...(fields.tier ? { tier: fields.tier } : {}),
    ...(fields.countries ? { countries: fields.countries } : {}),
    addresses: fields.addresses ?? addressesOf(s),
    ...overrides(fields, s.limits),
    ...(expiresAt === undefined ? (s.expires_at !== undefined ? { expires_at: s.expires_at } : {}) : expiresAt === null ? {} : { expires_at: expiresAt }),
    ...(note === undefined ? (s.note !== undefined ? { note: s.note } : {}) : note === null ? {} : { note }),
  };
}

/**
 * Whether a change is one only the role that issues keys may make (roles.ts): it ends the key
 * (an expiry in the past), revives an expired one, or opens it to every address.
 */
function issuesAccess(s: StoredKey, after: StoredKey, nowMs: number): string | undefined {
  const expired = (at: string | undefined): boolean => at !== undefined && Date.parse(at) <= nowMs;
  if (after.expires_at !== s.expires_at && expired(after.expires_at) && !expired(s.expires_at)) return 'ending a key (expires_at in the past)';
  if (expired(s.expires_at) && !expired(after.expires_at)) return 'reviving an expired key';
  if (after.addresses?.includes(ANY_ADDRESS) && !addressesOf(s).includes(ANY_ADDRESS)) return 'opening a key to every address (any)';
  return undefined;
}

function parseSet(input: unknown) {
  const { expires_at: expiresAt, note, ...rest } = parseInput(SetSchema, input);
  return { fields: checked(rest), expiresAt, note };
}

/** The key admin's changes; each one committed, audited and announced by the writer, then its event sent. */
export function keyAdminChanges(ctx: KeyAdminContext): Changes {
  const { writer, emit } = ctx;
  const view = (s: StoredKey) => keyView(s, ctx.config());
  const unlessRevoked = (what: string) => (s: StoredKey): void => {
    if (s.status === 'revoked') throw notAllowed(`A revoked key cannot be ${what}.`);
  };
  return {
    async create(input) {
      const fields = checked(parseInput(CreateSchema, input), true);
      const key = generateKeyValue();
      const { per_minute: _m, per_day: _d, per_month: _mo, limits: _l, ...rest } = fields;
      // The event is made from the record written, not read back: once committed, nothing may fail
      // the call, or the caller would get an error for a key that exists and never see its value.
      const { after } = await writer.insert({ ...rest, key_sha256: sha256Hex(key), status: 'active', ...overrides(fields) }, false);
      await emit('key.created', eventFields(view(after)));
      return { id: fields.id, key };
    },
    async set(id, input, may = { issue: true }) {
      const { fields, expiresAt, note } = parseSet(input);
      const { after, changes } = await writer.update(id, 'change', (s) => {
        const next = applySet(s, fields, expiresAt, note);
        const act = may.issue ? undefined : issuesAccess(s, next, Date.now());
        if (act) throw new ApiError('forbidden', {}, undefined, `${act[0]!.toUpperCase()}${act.slice(1)} needs the role "admin".`);
        return next;
      });
      // A change that changes nothing (`{}`, or the values the key has) is no event.
      if (Object.keys(changes).length) {
        await emit('key.changed', { key_id: id, ...fields, ...(expiresAt !== undefined ? { expires_at: expiresAt } : {}), ...(note !== undefined ? { note } : {}) });
      }
      return view(after);
    },
    async pause(id, reason) {
      const pauseReason = parseInput(PauseSchema, { reason }).reason;
      const paused = view((await writer.update(id, 'pause', (s) => {
        unlessRevoked('paused')(s);
        return { ...s, status: 'paused', pause_reason: pauseReason };
      })).after);
      await emit('key.paused', { key_id: id, status: 'paused', pause_reason: pauseReason });
      return paused;
    },
    async settle(id) {
      const settled = view((await writer.update(id, 'settle', (s) => {
        unlessRevoked('settled')(s);
        const { pause_reason: _r, ...rest } = s;
        return { ...rest, status: 'active' };
      })).after);
      await emit('key.settled', { key_id: id, status: 'active' });
      return settled;
    },
    async revoke(id) {
      const revoked = view((await writer.update(id, 'revoke', (s) => {
        const { pause_reason: _r, previous_key_sha256: _p, previous_expires_at: _e, ...rest } = s;
        return { ...rest, status: 'revoked' };
      })).after);
      await emit('key.revoked', { key_id: id, status: 'revoked' });
      return revoked;
    },
    async roll(id, graceSeconds) {
      const grace = parseInput(RollSchema, { grace_seconds: graceSeconds }).grace_seconds;
      const key = generateKeyValue();
      const { after } = await writer.update(id, 'roll', (s) => {
        unlessRevoked('rolled')(s);
        const { previous_key_sha256: _p, previous_expires_at: _e, ...rest } = s;
        return grace > 0
          ? { ...rest, key_sha256: sha256Hex(key), previous_key_sha256: s.key_sha256, previous_expires_at: Date.now() + grace * 1000 }
          : { ...rest, key_sha256: sha256Hex(key) };
      });
      // The grace end as stored, to the millisecond.
      const until = after.previous_expires_at;
      await emit('key.rolled', { key_id: id, previous_key_valid_until: grace > 0 && until !== undefined ? new Date(until).toISOString() : null });
      return { id, key };
    },
    /**
     * A key in use is revoked first, so deleting never silently cuts a customer off. The id's
     * counters and usage history go too, so a new key given the id starts from zero.
     */
    async delete(id) {
      await writer.remove(id, (s) => {
        if (s.status !== 'revoked') throw notAllowed(`Key "${id}" is ${s.status}: only a revoked key can be deleted (revoke it first).`);
      });
      await emit('key.deleted', { key_id: id });
      try {
        await ctx.counters.forget(id);
      } catch (err) {
        ctx.logger?.warn({ err: (err as Error).message, key_id: id }, 'key deleted but its counters were not; they expire with their windows');
      }
      try {
        await forgetUsage(ctx.redis, id);
      } catch (err) {
        ctx.logger?.warn({ err: (err as Error).message, key_id: id }, 'key deleted but its usage history was not; it expires with its months');
      }
    },
    async import(file, options = {}) {
      const entries = readKeysFile(file);
      if (!options.allowDemo) refuseDemoKeys(file, entries);
      for (const entry of entries) {
        const { before, after, changes } = await writer.insert(entry, true);
        // Re-importing a record as it is stored changes nothing: no event.
        if (!before) await emit('key.created', eventFields(view(after)));
        else if (Object.keys(changes).length) await emit('key.changed', eventFields(view(after)));
      }
      return entries.map((e) => e.id);
    },
  };
}
