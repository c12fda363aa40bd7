import { invalidParameter } from '../http/invalid-parameter';
import { refuseDemoKeys } from './key-backup';
import { generateKeyValue, sha256Hex } from './key-format';
import type { KeyAdmin, KeyAdminContext } from './key-admin-types';
import { ApiError } from '../errors';
import { ANY_ADDRESS } from './address-list';
import { addressesOf } from './key-entry';
import { checked, CreateSchema, notAllowed, overrides, parseInput, SetSchema } from './key-input';
import { eventFields, keyView } from './key-view';
import { readKeysFile } from './keys-file';
import { forgetUsage } from '../usage/forget-usage';
import { redisKeys, type StoredKey } from './redis-layout';
import type { RedisClient } from '../redis/connect';
import { readOutboxValue } from '../audit/outbox-value';
import { runAs } from '../audit/actor';

type Changes = Pick<KeyAdmin, 'create' | 'set' | 'delete' | 'import'>;

/** A key may only name an account that exists (gateway/accounts/ keeps them beside the keys). */
async function checkAccount(redis: RedisClient, account: string | null | undefined): Promise<void> {
  // Parsed, not EXISTS: a deleted account's value stays (a tombstone) until its audit entry is in the log.
  if (typeof account === 'string' && !readOutboxValue(await redis.get(redisKeys.account(account))).body) {
    throw invalidParameter('account', `no account with id "${account}"`);
  }
}

/** The record after a `set`: the fields the input names changed, `null` removing expiry or note. */
function applySet(s: StoredKey, parsed: ReturnType<typeof parseSet>): StoredKey {
  const { fields, expiresAt, note, account } = parsed;
  const { address: _a, expires_at: _e, note: _n, account: _acc, ...kept } = s;
  return {
    ...kept,
    ...(fields.tier ? { tier: fields.tier } : {}),
    ...(fields.countries ? { countries: fields.countries } : {}),
    addresses: fields.addresses ?? addressesOf(s),
    ...overrides(fields, s.limits),
    ...(expiresAt === undefined ? (s.expires_at !== undefined ? { expires_at: s.expires_at } : {}) : expiresAt === null ? {} : { expires_at: expiresAt }),
    ...(note === undefined ? (s.note !== undefined ? { note: s.note } : {}) : note === null ? {} : { note }),
    ...(account === undefined ? (s.account !== undefined ? { account: s.account } : {}) : account === null ? {} : { account }),
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
  const { expires_at: expiresAt, note, account, ...rest } = parseInput(SetSchema, input);
  return { fields: checked(rest), expiresAt, note, account };
}

/**
 * The key admin's changes of whole records and fields (its changes of state are in
 * key-admin-states.ts); each one committed, audited and announced by the writer, then its event sent.
 */
export function keyAdminChanges(ctx: KeyAdminContext): Changes {
  const { writer, emit } = ctx;
  const view = (s: StoredKey) => keyView(s, ctx.config());
  return {
    async create(input) {
      const fields = checked(parseInput(CreateSchema, input), true);
      await checkAccount(ctx.redis, fields.account);
      const key = generateKeyValue();
      const { per_minute: _m, per_day: _d, per_month: _mo, limits: _l, ...rest } = fields;
      // The event is made from the record written, not read back: once committed, nothing may fail
      // the call, or the caller would get an error for a key that exists and never see its value.
      const { after } = await writer.insert({ ...rest, key_sha256: sha256Hex(key), status: 'active', ...overrides(fields) }, false);
      await emit('key.created', eventFields(view(after)));
      return { id: fields.id, key };
    },
    async set(id, input, may = { issue: true }, origin) {
      const parsed = parseSet(input);
      const { fields, expiresAt, note, account } = parsed;
      await checkAccount(ctx.redis, account);
      const update = (change: (s: StoredKey) => StoredKey) => (origin?.actor ? runAs(origin.actor, () => writer.update(id, 'change', change)) : writer.update(id, 'change', change));
      const { after, changes } = await update((s) => {
        const next = applySet(s, parsed);
        const act = may.issue ? undefined : issuesAccess(s, next, Date.now());
        if (act) throw new ApiError('forbidden', {}, undefined, `${act[0]!.toUpperCase()}${act.slice(1)} needs the role "admin".`);
        return next;
      });
      // A change that changes nothing (`{}`, or the values the key has) is no event.
      if (Object.keys(changes).length) {
        await emit('key.changed', {
          key_id: id, ...fields, ...(expiresAt !== undefined ? { expires_at: expiresAt } : {}), ...(note !== undefined ? { note } : {}), ...(account !== undefined ? { account } : {}),
          ...origin?.eventFields,
        });
      }
      return view(after);
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
      for (const account of new Set(entries.map((e) => e.account))) await checkAccount(ctx.redis, account);
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
