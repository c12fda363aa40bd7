import type { RedisClient } from '../redis/connect';
import type { Logger } from 'pino';
import { z } from 'zod';
import { LimitsSchema, LimitValueSchema, type GatewayConfig } from '../config/gateway-config';
import { currentActor } from '../audit/actor';
import { diffRecords, type AuditAction } from '../audit/audit-entry';
import { createRedisAuditLog, DEFAULT_AUDIT_RETENTION, type AuditRetention } from '../audit/redis-audit-log';
import { ApiError } from '../errors';
import { counterKeys } from '../limits/redis-counters';
import { windowsAt } from '../limits/windows';
import { refuseDemoKeys } from './key-backup';
import { generateKeyValue, sha256Hex } from './key-format';
import { PAGE } from './key-page';
import { ANY_ADDRESS } from './address-list';
import { newEpoch } from './key-store-epoch';
import { addressesOf, checkKeyEntry, KeyEntryFields, readKeysFile, toKeyRecord, type KeyEntry } from './keys-file';
import { createRecordWrites } from './record-writes';
import { liveHashes, parseStoredKey, redisKeys, type StoredKey } from './redis-layout';
import type { KeyEventSink } from '../webhooks/webhook-event';

/** What operators see of a key: never a hash, never a value. */
export interface KeyView {
  id: string;
  tier: string;
  countries: string[];
  /** The addresses and CIDR ranges the key may be used from (`any`: every address). */
  addresses: string[];
  /** The first release's field, kept for readers of it: present when the list is one plain address. */
  address?: string;
  status: string;
  pause_reason?: string;
  limits: { per_minute: number; per_day: number; per_month: number };
  limit_overrides?: Partial<{ per_minute: number; per_day: number; per_month: number }>;
  previous_key_valid_until?: string;
  expires_at?: string;
  note?: string;
  /** The holder account the key belongs to (gateway/accounts/). */
  account?: string;
  created_at: string;
  updated_at: string;
}

export interface UsageView {
  id: string;
  windows: Array<{ window: 'minute' | 'day' | 'month'; used: number; limit: number; remaining: number; resets_at: string }>;
}

/**
 * Limits come as the `limits` object that reads return (`{"limits": {"per_minute": 10}}`), or as the
 * flat fields accepted from the first release; one field given both ways is refused (which wins
 * would be a guess).
 */
const LimitFields = {
  limits: LimitsSchema.partial().strict().optional(),
  per_minute: LimitValueSchema.optional(),
  per_day: LimitValueSchema.optional(),
  per_month: LimitValueSchema.optional(),
};
const CreateSchema = KeyEntryFields.pick({ id: true, tier: true, countries: true, address: true, addresses: true, expires_at: true, note: true, account: true })
  .extend(LimitFields)
  .strict();
/** An update names the fields it changes; `expires_at: null` and `note: null` remove them. */
const SetSchema = KeyEntryFields.pick({ tier: true, countries: true, address: true, addresses: true })
  .partial()
  .extend({
    ...LimitFields,
    expires_at: KeyEntryFields.shape.expires_at.unwrap().nullable().optional(),
    note: KeyEntryFields.shape.note.unwrap().nullable().optional(),
    account: KeyEntryFields.shape.account.unwrap().nullable().optional(),
  })
  .strict();
type LimitInput = { limits?: Partial<Record<LimitName, number>> } & Partial<Record<LimitName, number>>;
type LimitName = 'per_minute' | 'per_day' | 'per_month';
const LIMIT_NAMES: readonly LimitName[] = ['per_minute', 'per_day', 'per_month'];

/** The limits an input names, from either spelling; 400 naming the field when it is given twice. */
function limitsOf(input: LimitInput): Partial<Record<LimitName, number>> {
  const out: Partial<Record<LimitName, number>> = { ...input.limits };
  for (const name of LIMIT_NAMES) {
    if (input[name] === undefined) continue;
    if (out[name] !== undefined) {
      throw new ApiError('invalid_parameter', { parameter: name }, undefined, `${name}: given both flat and inside limits; give it once`);
    }
    out[name] = input[name];
  }
  return out;
}

/** A list cursor: the SSCAN cursor and how many ids of that batch the previous page already gave. */
const LIST_CURSOR = /^(0|[1-9][0-9]{0,19})-(0|[1-9][0-9]{0,4})$/;

export interface KeyPage {
  keys: KeyView[];
  next_cursor: string | null;
}
const PauseReason = z.enum(['unpaid_renewal', 'payment_dispute']);

/** Validates operator input; a bad field is 400 `invalid_parameter` naming it. */
function parseInput<S extends z.ZodTypeAny>(schema: S, input: unknown): z.infer<S> {
  const parsed = schema.safeParse(input);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  const parameter = issue.path.length ? String(issue.path[0]) : 'body';
  throw new ApiError('invalid_parameter', { parameter }, undefined, `${parameter}: ${issue.message}`);
}

/** Normalises countries and addresses; a bad one is 400 `invalid_parameter` naming the field. */
function checked<T extends Partial<KeyEntry>>(fields: T, complete = false): T {
  const result = checkKeyEntry(fields, complete);
  if (result.ok) return result.value;
  const parameter = String(result.issue.path[0]);
  throw new ApiError('invalid_parameter', { parameter }, undefined, `${parameter}: ${result.issue.message}`);
}

const unknownId = (id: string): ApiError => new ApiError('not_found', {}, undefined, `No key with id "${id}".`);
/** A key may only name an account that exists (gateway/accounts/ keeps them beside the keys). */
async function checkAccount(redis: RedisClient, account: string | null | undefined): Promise<void> {
  if (typeof account === 'string' && !(await redis.exists(redisKeys.account(account)))) {
    throw new ApiError('invalid_parameter', { parameter: 'account' }, undefined, `account: no account with id "${account}"`);
  }
}
const nowIso = (): string => new Date().toISOString();

/**
 * Key management over the Redis store, shared by the CLI, the admin API and the console, on any
 * topology. Every change is a compare-and-set of the record with its hash pointers written around it
 * in a safe order (record-writes.ts says why no transaction is needed: on a Redis Cluster the record,
 * its pointers and the audit log live in different slots), then its audit entry, then a change
 * message naming the hashes involved, so every gateway drops them from its cache at once. The actor
 * is the one the channel set with `runAs` (gateway/audit/actor.ts).
 */
export function createKeyAdmin(
  redis: RedisClient,
  initialConfig: GatewayConfig,
  logger?: Logger,
  auditRetention: AuditRetention = DEFAULT_AUDIT_RETENTION,
  events?: KeyEventSink,
) {
  let config = initialConfig;
  const audit = createRedisAuditLog(redis, redisKeys.audit, auditRetention);
  /**
   * Appends the audit entry of a committed change (a change that changes nothing visible is not
   * one). After the commit, not in one transaction with it: on a cluster the log is in another slot.
   * So the entry is written at most once: a writer that dies, or a Redis that fails, between the
   * commit and this loses the entry, which is logged as an error (never reported as a failed change:
   * a retried roll would hand out a second value).
   */
  const audited = async (action: AuditAction, id: string, before: StoredKey | undefined, after: StoredKey | undefined): Promise<void> => {
    const changes = diffRecords(before, after);
    if (!Object.keys(changes).length && action !== 'roll') return;
    try {
      const tx = redis.pipeline(); // both commands on the log's one key: one slot
      audit.append(tx, currentActor(), action, id, changes);
      await tx.exec();
    } catch (err) {
      logger?.error({ err: (err as Error).message, key_id: id, action }, 'key change stored but not written to the audit log');
    }
  };
  /** Key events (webhooks) after a committed change: ids and changed fields, never a hash or value. */
  const emit: KeyEventSink = events ?? (async () => undefined);
  const view = (s: StoredKey): KeyView => {
    const record = toKeyRecord(s, config);
    const addresses = addressesOf(s);
    return {
      id: s.id,
      tier: s.tier,
      countries: s.countries,
      addresses,
      ...(addresses.length === 1 && !addresses[0]!.includes('/') && addresses[0] !== ANY_ADDRESS ? { address: addresses[0] } : {}),
      status: s.status,
      ...(s.pause_reason ? { pause_reason: s.pause_reason } : {}),
      limits: { per_minute: record.limits.perMinute, per_day: record.limits.perDay, per_month: record.limits.perMonth },
      ...(s.limits && Object.keys(s.limits).length ? { limit_overrides: s.limits } : {}),
      ...(s.previous_key_sha256 && (s.previous_expires_at ?? 0) > Date.now()
        ? { previous_key_valid_until: new Date(s.previous_expires_at!).toISOString() }
        : {}),
      ...(s.expires_at !== undefined ? { expires_at: s.expires_at } : {}),
      ...(s.note !== undefined ? { note: s.note } : {}),
      ...(s.account !== undefined ? { account: s.account } : {}),
      created_at: s.created_at,
      updated_at: s.updated_at,
    };
  };

  async function load(id: string): Promise<StoredKey> {
    const stored = parseStoredKey(await redis.get(redisKeys.record(id)));
    if (!stored) throw unknownId(id);
    return stored;
  }

  /**
   * Tells every gateway which hashes changed. It runs after the change is committed: a failure here
   * does not undo it (the gateways' cache TTL is the safety net), so it is logged, not reported as a
   * failed change (a retried roll would otherwise hand out a second value).
   */
  const publish = async (hashes: string[]): Promise<void> => {
    try {
      await redis.publish(redisKeys.changes, JSON.stringify({ hashes }));
    } catch (err) {
      logger?.warn({ err: (err as Error).message }, 'key change stored but not announced; gateways see it when their cache expires');
    }
  };

  const writes = createRecordWrites(redis);

  /** Read, change, compare-and-set; retried when another writer got there first. */
  async function update(id: string, action: AuditAction, change: (s: StoredKey) => StoredKey): Promise<StoredKey> {
    for (let attempt = 0; attempt < 10; attempt++) {
      const json = await redis.get(redisKeys.record(id));
      const before = parseStoredKey(json);
      if (!before) throw unknownId(id);
      const after = { ...change(before), updated_at: nowIso() };
      if (await writes.commit({ stored: before, json }, after)) {
        await audited(action, id, before, after);
        await publish([...new Set([...liveHashes(before, 0), ...liveHashes(after, 0)])]);
        return after;
      }
    }
    throw writes.concurrent();
  }

  const insertAction = (allowReplace: boolean): AuditAction => (allowReplace ? 'import' : 'create');
  /** Writes a whole record (new, or replacing one when `allowReplace`); the hash may not be another key's. Returns what was written. */
  async function insert(entry: KeyEntry, allowReplace: boolean): Promise<{ done: 'created' | 'replaced'; stored: StoredKey }> {
    for (let attempt = 0; attempt < 10; attempt++) {
      const json = await redis.get(redisKeys.record(entry.id));
      const existing = parseStoredKey(json);
      if (existing && !allowReplace) throw new ApiError('invalid_parameter', { parameter: 'id' }, undefined, `A key with id "${entry.id}" already exists.`);
      const now = nowIso();
      // A keys-file rotation (previous hash and its end as a date) becomes the store's form.
      const { previous_key_expires_at: previousEnd, previous_key_sha256: previousHash, ...current } = entry;
      const previousUntil = previousEnd !== undefined ? Date.parse(previousEnd) : undefined;
      const rotating = previousHash !== undefined && previousUntil !== undefined && previousUntil > Date.now();
      const stored: StoredKey = {
        ...current,
        ...(rotating ? { previous_key_sha256: previousHash, previous_expires_at: previousUntil } : {}),
        created_at: existing?.created_at ?? now,
        updated_at: now,
      };
      if (await writes.commit({ ...(existing ? { stored: existing } : {}), json }, stored)) {
        // The key-store marker: its absence later tells a lost store from one that never held keys.
        await redis.set(redisKeys.epoch, newEpoch(), 'NX');
        await audited(insertAction(allowReplace), entry.id, existing, stored);
        await publish([entry.key_sha256, ...(existing ? liveHashes(existing, 0) : [])]);
        return { done: existing ? 'replaced' : 'created', stored };
      }
    }
    throw writes.concurrent();
  }

  const overrides = (input: LimitInput, base: StoredKey['limits'] = {}) => {
    const limits = { ...base, ...limitsOf(input) };
    return Object.keys(limits).length ? { limits } : {};
  };

  /**
   * One page of ids by SSCAN over the id set: never one unbounded read. SSCAN's COUNT is a hint (a
   * small set comes back whole), so the cursor also says how many ids of its batch were already
   * given; asking SSCAN again from the same cursor gives the same batch while the set is unchanged.
   * As with SCAN, an id present for the whole walk is listed; one added or deleted meanwhile may
   * or may not be.
   */
  async function pageOfIds(limit: number, cursor: string | undefined): Promise<{ ids: string[]; next: string | null }> {
    let scan = '0';
    let skip = 0;
    if (cursor !== undefined) {
      const m = LIST_CURSOR.exec(cursor);
      if (!m) throw new ApiError('invalid_parameter', { parameter: 'cursor' }, undefined, 'cursor: not a cursor this API gave (pass next_cursor back unchanged)');
      scan = m[1]!;
      skip = Number(m[2]);
    }
    const ids: string[] = [];
    const seen = new Set<string>();
    for (;;) {
      const [nextScan, batch] = await redis.sscan(redisKeys.ids, scan, 'COUNT', limit);
      for (let i = skip; i < batch.length; i++) {
        if (ids.length === limit) return { ids, next: `${scan}-${i}` };
        const id = batch[i]!;
        // SSCAN may give an id twice during a rehash: once per page is what we can promise.
        if (!seen.has(id)) {
          seen.add(id);
          ids.push(id);
        }
      }
      skip = 0;
      scan = nextScan;
      if (scan === '0') return { ids, next: null };
      if (ids.length === limit) return { ids, next: `${scan}-0` };
    }
  }
  /** A record's fields for an event: what operators see (no hash, no value), under `key_id`. */
  const eventFields = (s: StoredKey): Record<string, unknown> => {
    const { id, created_at: _c, updated_at: _u, ...fields } = view(s);
    return { key_id: id, ...fields };
  };

  return {
    /** A new key: the value is returned once and only its hash is stored. */
    async create(input: unknown): Promise<{ id: string; key: string }> {
      const fields = checked(parseInput(CreateSchema, input), true);
      await checkAccount(redis, fields.account);
      const key = generateKeyValue();
      const { per_minute: _m, per_day: _d, per_month: _mo, limits: _l, ...rest } = fields;
      // The event is made from the record written, not read back: once committed, nothing may fail
      // the call, or the caller would get an error for a key that exists and never see its value.
      const { stored } = await insert({ ...rest, key_sha256: sha256Hex(key), status: 'active', ...overrides(fields) }, false);
      await emit('key.created', eventFields(stored));
      return { id: fields.id, key };
    },
    /** One page of records (ids in SSCAN order, sorted within the page); `next_cursor` null on the last. */
    async list(options: { limit?: number; cursor?: string } = {}): Promise<KeyPage> {
      const limit = options.limit ?? PAGE.default;
      if (!Number.isInteger(limit) || limit < PAGE.min || limit > PAGE.max) {
        throw new ApiError('invalid_parameter', { parameter: 'limit' }, undefined, `limit: must be a whole number from ${PAGE.min} to ${PAGE.max}`);
      }
      const { ids, next } = await pageOfIds(limit, options.cursor);
      ids.sort();
      // One GET per record (records live in different cluster slots, so no MGET); a page is at most 1,000.
      const records: Array<string | null> = [];
      for (let i = 0; i < ids.length; i += 100) records.push(...(await Promise.all(ids.slice(i, i + 100).map((one) => redis.get(redisKeys.record(one))))));
      const keys = records.map(parseStoredKey).filter((s): s is StoredKey => s !== undefined).map(view);
      return { keys, next_cursor: next };
    },
    show: async (id: string): Promise<KeyView> => view(await load(id)),
    async usage(id: string): Promise<UsageView> {
      const stored = await load(id);
      const limits = toKeyRecord(stored, config).limits;
      const now = Date.now();
      const bounds = windowsAt(now);
      const keys = counterKeys(id, bounds);
      const [minute, day, month] = (await redis.mget(keys.minute, keys.day, keys.month)).map((v) => Number(v ?? 0));
      const row = (window: 'minute' | 'day' | 'month', used: number, limit: number) => ({
        window, used, limit, remaining: Math.max(0, limit - used), resets_at: new Date(bounds[window].reset).toISOString(),
      });
      return { id, windows: [row('minute', minute!, limits.perMinute), row('day', day!, limits.perDay), row('month', month!, limits.perMonth)] };
    },
    async set(id: string, input: unknown): Promise<KeyView> {
      const { expires_at: expiresAt, note, account, ...rest } = parseInput(SetSchema, input);
      const fields = checked(rest);
      await checkAccount(redis, account);
      const changed = view(await update(id, 'change', (s) => {
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
      }));
      await emit('key.changed', {
        key_id: id, ...fields, ...(expiresAt !== undefined ? { expires_at: expiresAt } : {}), ...(note !== undefined ? { note } : {}), ...(account !== undefined ? { account } : {}),
      });
      return changed;
    },
    async pause(id: string, reason: unknown): Promise<KeyView> {
      const pauseReason = parseInput(z.object({ reason: PauseReason }), { reason }).reason;
      const paused = view(await update(id, 'pause', (s) => {
        if (s.status === 'revoked') throw new ApiError('invalid_parameter', { parameter: 'id' }, undefined, 'A revoked key cannot be paused.');
        return { ...s, status: 'paused', pause_reason: pauseReason };
      }));
      await emit('key.paused', { key_id: id, status: 'paused', pause_reason: pauseReason });
      return paused;
    },
    async settle(id: string): Promise<KeyView> {
      const settled = view(await update(id, 'settle', (s) => {
        if (s.status === 'revoked') throw new ApiError('invalid_parameter', { parameter: 'id' }, undefined, 'A revoked key cannot be settled.');
        const { pause_reason: _r, ...rest } = s;
        return { ...rest, status: 'active' };
      }));
      await emit('key.settled', { key_id: id, status: 'active' });
      return settled;
    },
    async revoke(id: string): Promise<KeyView> {
      const revoked = view(await update(id, 'revoke', (s) => {
        const { pause_reason: _r, previous_key_sha256: _p, previous_expires_at: _e, ...rest } = s;
        return { ...rest, status: 'revoked' };
      }));
      await emit('key.revoked', { key_id: id, status: 'revoked' });
      return revoked;
    },
    /** A new value for the key; the old one keeps working for `graceSeconds`. */
    async roll(id: string, graceSeconds: unknown): Promise<{ id: string; key: string }> {
      const grace = parseInput(z.object({ grace_seconds: z.number().int().min(0).max(90 * 86400) }), { grace_seconds: graceSeconds }).grace_seconds;
      const key = generateKeyValue();
      await update(id, 'roll', (s) => {
        if (s.status === 'revoked') throw new ApiError('invalid_parameter', { parameter: 'id' }, undefined, 'A revoked key cannot be rolled.');
        const { previous_key_sha256: _p, previous_expires_at: _e, ...rest } = s;
        return grace > 0
          ? { ...rest, key_sha256: sha256Hex(key), previous_key_sha256: s.key_sha256, previous_expires_at: Date.now() + grace * 1000 }
          : { ...rest, key_sha256: sha256Hex(key) };
      });
      await emit('key.rolled', { key_id: id, previous_key_valid_until: grace > 0 ? new Date(Date.now() + grace * 1000).toISOString() : null });
      return { id, key };
    },
    /**
     * Removes a revoked record for good, which frees its id (CONTRACT part 7). Any other state is
     * 400: a key in use is revoked first, so deleting never silently cuts a customer off. The id's
     * counters go too, so a new key given the id starts from zero.
     */
    async delete(id: string): Promise<void> {
      let stored: StoredKey | undefined;
      for (let attempt = 0; ; attempt++) {
        if (attempt === 10) throw writes.concurrent();
        const json = await redis.get(redisKeys.record(id));
        stored = parseStoredKey(json);
        if (!stored) throw unknownId(id);
        if (stored.status !== 'revoked') {
          throw new ApiError('invalid_parameter', { parameter: 'id' }, undefined, `Key "${id}" is ${stored.status}: only a revoked key can be deleted (revoke it first).`);
        }
        if (await writes.remove({ stored, json: json! })) break;
      }
      await audited('delete', id, stored, undefined);
      const hashes = liveHashes(stored, 0);
      await publish(hashes);
      await emit('key.deleted', { key_id: id });
      const keys = counterKeys(id, windowsAt(Date.now()));
      try {
        await redis.del(keys.minute, keys.day, keys.month);
      } catch (err) {
        logger?.warn({ err: (err as Error).message, key_id: id }, 'key deleted but its counters were not; they expire with their windows');
      }
    },
    /** New tier defaults (hot reload): views and usage report the limits the gateway enforces. */
    updateConfig(next: GatewayConfig): void {
      config = next;
    },
    /** The audit log of this store (newest first, paged). */
    readAudit: audit.read,
    /**
     * Upserts every record of a YAML keys file (an export restores the store); returns the ids. Demo
     * keys (values published in the README) are refused unless `allowDemo`: before anything is written.
     */
    async import(file: string, options: { allowDemo?: boolean } = {}): Promise<string[]> {
      const entries = readKeysFile(file);
      if (!options.allowDemo) refuseDemoKeys(file, entries);
      for (const account of new Set(entries.map((e) => e.account))) await checkAccount(redis, account);
      for (const entry of entries) {
        const { done, stored } = await insert(entry, true);
        await emit(done === 'created' ? 'key.created' : 'key.changed', eventFields(stored));
      }
      return entries.map((e) => e.id);
    },
  };
}

export type KeyAdmin = ReturnType<typeof createKeyAdmin>;
