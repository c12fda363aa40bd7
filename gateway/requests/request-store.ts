// gateway/requests/: holders' subscription requests: the model, Redis and memory stores, paging, approval
// through the key admin, and the /admin/requests routes.
import type { RequestChange, RequestStatus, SubscriptionRequest } from './subscription-request';

export interface RequestQuery {
  status?: RequestStatus;
  accountId?: string;
  keyId?: string;
  /** 1..1000. */
  limit: number;
  cursor?: string;
}

/**
 * Subscription requests (docs/portal.md), newest first. `create` emits `subscription.requested`;
 * `decide` approves or declines a pending request once (a second decision is 409 `conflict`):
 * approval applies the change to the same key through the key admin (audited, `key.changed`), then
 * emits `subscription.approved` or `subscription.declined`. Every change is audited under the
 * current actor (`request.create`, `request.approve`, `request.decline`).
 */
export interface RequestStore {
  /**
   * Records a pending request, unless the key has one with the same change pending already (a form
   * sent twice: that one is returned, nothing new recorded) or MAX_PENDING_REQUESTS pending
   * (TooManyPending). Both are checked in the same atomic step that takes the request's place, so
   * concurrent creations cannot pass them together.
   */
  create(input: { keyId: string; accountId: string; change: RequestChange }): Promise<SubscriptionRequest>;
  list(q: RequestQuery): Promise<{ requests: SubscriptionRequest[]; nextCursor: string | null }>;
  get(id: string): Promise<SubscriptionRequest | undefined>;
  decide(id: string, outcome: 'approved' | 'declined', by: string): Promise<SubscriptionRequest>;
}

/** Applies an approved change to its key, which must still be the account's (see apply-change.ts). */
export type ApplyChange = (keyId: string, change: RequestChange, accountId: string) => Promise<void>;
