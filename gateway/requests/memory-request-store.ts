import type { KeyEventSink } from '../webhooks/webhook-event';
import { noAudit, type ChangeAudit } from '../accounts/change-audit';
import type { ApplyChange, RequestStore } from './request-store';
import { checkPageLimit } from '../http/list-query';
import { decodeRequestCursor, encodeRequestCursor } from './request-page';
import { alreadyDecided, checkChange, eventData, MAX_PENDING_REQUESTS, newRequestId, sameRequestKey, TooManyPending, unknownRequest, type SubscriptionRequest } from './subscription-request';

export interface RequestStoreDeps {
  /** Applies an approved change to its key (applyThroughKeyAdmin). */
  readonly apply: ApplyChange;
  readonly events?: KeyEventSink;
  readonly audit?: ChangeAudit;
}

/** Requests in this process: the twin of the Redis store (tests, the embedded default). */
export function createMemoryRequestStore(deps: RequestStoreDeps): RequestStore {
  const requests = new Map<string, SubscriptionRequest>();
  const emit = deps.events ?? (async () => undefined);
  const audit = deps.audit ?? noAudit;
  return {
    async create(input) {
      const change = checkChange(input.change);
      // Checked and recorded with no await in between: one step for this process.
      const same = sameRequestKey(input.accountId, change);
      const pending = [...requests.values()].filter((r) => r.keyId === input.keyId && r.status === 'pending');
      const first = pending.find((r) => sameRequestKey(r.accountId, r.change) === same);
      if (first) return first;
      if (pending.length >= MAX_PENDING_REQUESTS) throw new TooManyPending();
      let id = newRequestId();
      while (requests.has(id)) id = newRequestId();
      const request: SubscriptionRequest = { id, keyId: input.keyId, accountId: input.accountId, change, status: 'pending', createdAt: new Date().toISOString(), decidedAt: null, decidedBy: null };
      requests.set(id, request);
      await audit('request.create', { accountId: input.accountId, keyId: input.keyId }, { request_id: { before: null, after: id }, change: { before: null, after: change } });
      await emit('subscription.requested', eventData(request));
      return request;
    },
    async list(q) {
      checkPageLimit(q.limit);
      const before = q.cursor === undefined ? undefined : decodeRequestCursor(q.cursor);
      const matching = [...requests.values()]
        .filter((r) => (before === undefined || r.id < before) && (!q.status || r.status === q.status) && (!q.accountId || r.accountId === q.accountId) && (!q.keyId || r.keyId === q.keyId))
        .sort((a, b) => (a.id < b.id ? 1 : -1));
      const page = matching.slice(0, q.limit);
      return { requests: page, nextCursor: matching.length > q.limit ? encodeRequestCursor(page[page.length - 1]!.id) : null };
    },
    get: async (id) => requests.get(id),
    async decide(id, outcome, by) {
      const before = requests.get(id);
      if (!before) throw unknownRequest(id);
      if (before.status !== 'pending') throw alreadyDecided(before);
      const decided: SubscriptionRequest = { ...before, status: outcome, decidedAt: new Date().toISOString(), decidedBy: by };
      requests.set(id, decided);
      if (outcome === 'approved') {
        try {
          await deps.apply(before.keyId, before.change, before.accountId);
        } catch (err) {
          requests.set(id, before);
          throw err;
        }
      }
      await audit(outcome === 'approved' ? 'request.approve' : 'request.decline', { accountId: before.accountId, keyId: before.keyId }, { status: { before: 'pending', after: outcome } });
      await emit(outcome === 'approved' ? 'subscription.approved' : 'subscription.declined', eventData(decided));
      return decided;
    },
  };
}
