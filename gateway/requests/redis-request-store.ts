import { z } from 'zod';
import type { Logger } from 'pino';
import type { RedisClient } from '../redis/connect';
import type { AuditOutbox } from '../audit/audit-outbox';
import { auditedWrite, drainLogged } from '../audit/audited-write';
import { outboxJson, readOutboxValue } from '../audit/outbox-value';
import { compareAndSet } from '../redis/compare-and-set';
import { parseStoredJson } from '../validation/stored-json';
import type { RequestStoreDeps } from './memory-request-store';
import { createPendingGate } from './pending-gate';
import type { RequestQuery, RequestStore } from './request-store';
import { checkPageLimit } from '../http/list-query';
import { decodeRequestCursor, encodeRequestCursor } from './request-page';
import { alreadyDecided, checkChange, eventData, newRequestId, unknownRequest, type SubscriptionRequest } from './subscription-request';

/**
 * Where requests live in Redis, beside the keys (`lgw:` prefix): the record as JSON, and sorted
 * sets of ids (all scores 0, so ZRANGEBYLEX orders them by id, which is by creation time) for all
 * requests, per status, per account and per key. Indexes may hold an id a little longer than true
 * (a decided request still in `pending` after a writer died): readers check each record.
 */
export const requestKeys = {
  record: (id: string) => `lgw:request:${id}`,
  all: 'lgw:requests',
  byStatus: (status: string) => `lgw:requests:status:${status}`,
  byAccount: (id: string) => `lgw:requests:account:${id}`,
  byKey: (id: string) => `lgw:requests:key:${id}`,
} as const;

const Stored = z.object({
  id: z.string(),
  keyId: z.string(),
  accountId: z.string(),
  change: z.union([z.object({ countries: z.array(z.string()) }).strict(), z.object({ tier: z.string() }).strict()]),
  status: z.enum(['pending', 'approved', 'declined']),
  createdAt: z.string(),
  decidedAt: z.string().nullable(),
  decidedBy: z.string().nullable(),
});
const parse = (json: string | null): SubscriptionRequest | undefined => parseStoredJson(Stored, json);
/** A page reads at most this many index entries, so a rare filter costs a bounded time. */
const SCAN_BUDGET = 5_000;

const matches = (r: SubscriptionRequest, q: RequestQuery): boolean =>
  (!q.status || r.status === q.status) && (!q.accountId || r.accountId === q.accountId) && (!q.keyId || r.keyId === q.keyId);

/** A page of requests, newest first: through the narrowest index, each record checked against the filters. */
async function listRequests(redis: RedisClient, get: (id: string) => Promise<SubscriptionRequest | undefined>, q: RequestQuery): Promise<{ requests: SubscriptionRequest[]; nextCursor: string | null }> {
  checkPageLimit(q.limit);
  const index = q.keyId ? requestKeys.byKey(q.keyId) : q.accountId ? requestKeys.byAccount(q.accountId) : q.status ? requestKeys.byStatus(q.status) : requestKeys.all;
  let max = q.cursor === undefined ? '+' : `(${decodeRequestCursor(q.cursor)}`;
  const out: SubscriptionRequest[] = [];
  let scanned = 0;
  for (;;) {
    const batch = Math.min(1000, Math.max(q.limit - out.length, 50));
    const ids = await redis.zrevrangebylex(index, max, '-', 'LIMIT', 0, batch);
    const records = await Promise.all(ids.map(get));
    for (let i = 0; i < ids.length; i++) {
      scanned++;
      max = `(${ids[i]!}`;
      const r = records[i];
      if (r && matches(r, q)) out.push(r);
      if (out.length === q.limit) return { requests: out, nextCursor: i + 1 < ids.length || ids.length === batch ? encodeRequestCursor(ids[i]!) : null };
    }
    if (ids.length < batch) return { requests: out, nextCursor: null };
    if (scanned >= SCAN_BUDGET) return { requests: out, nextCursor: encodeRequestCursor(ids[ids.length - 1]!) };
  }
}

const concurrent = (): Error => new Error('the request kept changing under this writer');

/**
 * Subscription requests in Redis: every instance sees the same; a creation and a decision are each
 * one compare-and-set of the record carrying its audit entry (gateway/audit/audited-write.ts), so
 * each is in the log exactly once, on every topology. A creation first takes the request's place
 * in the key's pending gate (pending-gate.ts: the cap and the same-request check in one step); a
 * decision frees it.
 */
export function createRedisRequestStore(redis: RedisClient, deps: RequestStoreDeps & { outbox: AuditOutbox; logger?: Logger }): RequestStore {
  const emit = deps.events ?? (async () => undefined);
  const { outbox, logger } = deps;
  const get = async (id: string): Promise<SubscriptionRequest | undefined> => parse(await redis.get(requestKeys.record(id)));
  const subject = (r: SubscriptionRequest) => ({ key_id: r.keyId, account_id: r.accountId });
  const gate = createPendingGate(redis, { get, pendingOf: async (keyId) => (await listRequests(redis, get, { keyId, status: 'pending', limit: 1000 })).requests });
  return {
    async create(input) {
      const change = checkChange(input.change);
      const request: SubscriptionRequest = {
        id: newRequestId(), keyId: input.keyId, accountId: input.accountId, change, status: 'pending', createdAt: new Date().toISOString(), decidedAt: null, decidedBy: null,
      };
      const claim = await gate.claim(request);
      if (!claim.taken) return claim.first;
      await auditedWrite(redis, outbox, requestKeys.record(request.id), {
        plan: ({ json }) => {
          if (json !== null) throw new Error('request id collision');
          return { next: request, entry: { action: 'request.create', ...subject(request), changes: { request_id: { before: null, after: request.id }, change: { before: null, after: change } } } };
        },
        // The indexes before the record: readers skip an id without a record.
        prepare: async () => {
          for (const index of [requestKeys.all, requestKeys.byStatus('pending'), requestKeys.byAccount(request.accountId), requestKeys.byKey(request.keyId)]) {
            await redis.zadd(index, 0, request.id);
          }
        },
        giveUp: concurrent,
        ...(logger ? { logger } : {}),
      }).catch(async (err: unknown) => {
        // Not recorded: its place is freed (or, if this fails too, by the next claim that finds it).
        if (!(await get(request.id).catch(() => request))) await gate.release(request).catch(() => undefined);
        throw err;
      });
      await emit('subscription.requested', eventData(request));
      return request;
    },
    list: (q) => listRequests(redis, get, q),
    get,
    async decide(id, outcome, by) {
      const record = requestKeys.record(id);
      const { planned, op } = await auditedWrite(redis, outbox, record, {
        plan: ({ json }) => {
          const before = parse(json);
          if (!before) throw unknownRequest(id);
          if (before.status !== 'pending') throw alreadyDecided(before);
          const decided: SubscriptionRequest = { ...before, status: outcome, decidedAt: new Date().toISOString(), decidedBy: by };
          const action = outcome === 'approved' ? 'request.approve' : 'request.decline';
          return { before, decided, next: decided, entry: { action, ...subject(before), changes: { status: { before: 'pending', after: outcome } } } } as const;
        },
        giveUp: concurrent,
        keepPending: true,
        ...(logger ? { logger } : {}),
      });
      const { before, decided } = planned;
      if (outcome === 'approved') {
        try {
          await deps.apply(before.keyId, before.change, before.accountId);
        } catch (err) {
          await undecide(redis, record, op, before);
          throw err;
        }
      }
      await drainLogged(outbox, record, logger);
      await redis.zadd(requestKeys.byStatus(outcome), 0, id);
      await redis.zrem(requestKeys.byStatus('pending'), id);
      await gate.release(before);
      await emit(outcome === 'approved' ? 'subscription.approved' : 'subscription.declined', eventData(decided));
      return decided;
    },
  };
}

/**
 * A decision whose change could not be applied: pending again, and its entry taken out of the
 * record with it (unless another writer changed the record since). Only a read of the log during
 * the approval can have moved the entry already; it then stays.
 */
async function undecide(redis: RedisClient, record: string, op: string, before: SubscriptionRequest): Promise<void> {
  const value = readOutboxValue(await redis.get(record));
  if (value.op !== op) return;
  await compareAndSet(redis, record, value.json, outboxJson(before, value.pending.filter((e) => e.op !== op), undefined));
}
