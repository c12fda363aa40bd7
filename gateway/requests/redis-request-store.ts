import { z } from 'zod';
import type { RedisClient } from '../redis/connect';
import { parseStoredJson } from '../validation/stored-json';
import { noAudit } from '../accounts/change-audit';
import { COMPARE_AND_SET } from '../accounts/redis-account-layout';
import type { RequestStoreDeps } from './memory-request-store';
import type { RequestQuery, RequestStore } from './request-store';
import { checkPageLimit, decodeRequestCursor, encodeRequestCursor } from './request-page';
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

/** Subscription requests in Redis: every instance sees the same; a decision is one compare-and-set. */
export function createRedisRequestStore(redis: RedisClient, deps: RequestStoreDeps): RequestStore {
  const emit = deps.events ?? (async () => undefined);
  const audit = deps.audit ?? noAudit;
  const cas = async (key: string, expected: string, next: string): Promise<boolean> => (await redis.eval(COMPARE_AND_SET, 1, key, expected, next)) === 1;
  const get = async (id: string): Promise<SubscriptionRequest | undefined> => parse(await redis.get(requestKeys.record(id)));
  return {
    async create(input) {
      const change = checkChange(input.change);
      const request: SubscriptionRequest = {
        id: newRequestId(), keyId: input.keyId, accountId: input.accountId, change, status: 'pending', createdAt: new Date().toISOString(), decidedAt: null, decidedBy: null,
      };
      if ((await redis.set(requestKeys.record(request.id), JSON.stringify(request), 'NX')) !== 'OK') throw new Error('request id collision');
      for (const index of [requestKeys.all, requestKeys.byStatus('pending'), requestKeys.byAccount(request.accountId), requestKeys.byKey(request.keyId)]) {
        await redis.zadd(index, 0, request.id);
      }
      await audit('request.create', { accountId: request.accountId, keyId: request.keyId }, { request_id: { before: null, after: request.id }, change: { before: null, after: change } });
      await emit('subscription.requested', eventData(request));
      return request;
    },
    async list(q) {
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
    },
    get,
    async decide(id, outcome, by) {
      const json = await redis.get(requestKeys.record(id));
      const before = parse(json);
      if (!before) throw unknownRequest(id);
      if (before.status !== 'pending') throw alreadyDecided(before);
      const decided: SubscriptionRequest = { ...before, status: outcome, decidedAt: new Date().toISOString(), decidedBy: by };
      const decidedJson = JSON.stringify(decided);
      if (!(await cas(requestKeys.record(id), json!, decidedJson))) {
        const now = await get(id);
        throw now ? alreadyDecided(now) : unknownRequest(id);
      }
      if (outcome === 'approved') {
        try {
          await deps.apply(before.keyId, before.change, before.accountId);
        } catch (err) {
          await cas(requestKeys.record(id), decidedJson, json!); // not applied: pending again
          throw err;
        }
      }
      await redis.zadd(requestKeys.byStatus(outcome), 0, id);
      await redis.zrem(requestKeys.byStatus('pending'), id);
      await audit(outcome === 'approved' ? 'request.approve' : 'request.decline', { accountId: before.accountId, keyId: before.keyId }, { status: { before: 'pending', after: outcome } });
      await emit(outcome === 'approved' ? 'subscription.approved' : 'subscription.declined', eventData(decided));
      return decided;
    },
  };
}
