import { randomBytes } from 'node:crypto';
import { ApiError } from '../errors';
import { invalidParameter } from '../http/invalid-parameter';
import { normaliseCountry } from '../validation/iso-countries';

/** What a holder asks for: countries to add to a key, or a tier. */
export type RequestChange = { countries: string[] } | { tier: string };
export type RequestStatus = 'pending' | 'approved' | 'declined';
export const REQUEST_STATUSES: readonly RequestStatus[] = ['pending', 'approved', 'declined'];
export const TIERS = ['standard', 'advanced'] as const;

/** A subscription request (docs/portal.md); an operator approves or declines it. */
export interface SubscriptionRequest {
  id: string;
  keyId: string;
  accountId: string;
  change: RequestChange;
  status: RequestStatus;
  createdAt: string;
  decidedAt: string | null;
  decidedBy: string | null;
}

/** `req-` + creation time (ms, 13 digits, so ids sort by time) + 8 random characters. */
export const newRequestId = (nowMs = Date.now()): string =>
  `req-${String(nowMs).padStart(13, '0')}-${randomBytes(6).toString('base64url').replace(/[^A-Za-z0-9]/g, 'x')}`;
export const REQUEST_ID = /^req-[0-9]{13}-[A-Za-z0-9]{8}$/;

/** Checks and normalises a change (countries upper-cased, de-duplicated); 400 naming the field. */
export function checkChange(change: unknown): RequestChange {
  if (typeof change !== 'object' || change === null || Array.isArray(change)) throw invalidParameter('change', 'must be {"countries": [...]} or {"tier": "..."}');
  const fields = Object.keys(change);
  if (fields.length !== 1 || (fields[0] !== 'countries' && fields[0] !== 'tier')) throw invalidParameter('change', 'must be {"countries": [...]} or {"tier": "..."}');
  const c = change as Record<string, unknown>;
  if (fields[0] === 'tier') {
    if (typeof c.tier !== 'string' || !(TIERS as readonly string[]).includes(c.tier)) throw invalidParameter('tier', `must be one of ${TIERS.join(', ')}`);
    return { tier: c.tier };
  }
  if (!Array.isArray(c.countries) || c.countries.length === 0 || c.countries.length > 250) throw invalidParameter('countries', 'must list 1 to 250 countries');
  const countries: string[] = [];
  for (const raw of c.countries) {
    const code = typeof raw === 'string' ? normaliseCountry(raw) : undefined;
    if (!code) throw invalidParameter('countries', `"${String(raw)}" is not an ISO 3166-1 alpha-2 code`);
    if (!countries.includes(code)) countries.push(code);
  }
  return { countries };
}

export function checkStatus(status: string | undefined): RequestStatus | undefined {
  if (status === undefined) return undefined;
  if (!(REQUEST_STATUSES as readonly string[]).includes(status)) throw invalidParameter('status', `must be one of ${REQUEST_STATUSES.join(', ')}`);
  return status as RequestStatus;
}

/** What the admin API, the CLI and webhooks show (docs/portal.md's field names). */
export interface RequestView {
  id: string;
  key_id: string;
  account_id: string;
  change: RequestChange;
  status: RequestStatus;
  created_at: string;
  decided_at: string | null;
  decided_by: string | null;
}
export const requestView = (r: SubscriptionRequest): RequestView => ({
  id: r.id, key_id: r.keyId, account_id: r.accountId, change: r.change, status: r.status, created_at: r.createdAt, decided_at: r.decidedAt, decided_by: r.decidedBy,
});

/** The data of a `subscription.*` webhook event. */
export const eventData = (r: SubscriptionRequest): Record<string, unknown> => ({ request_id: r.id, key_id: r.keyId, account_id: r.accountId, change: r.change });

/**
 * At most this many requests of a key wait for the provider at once: a holder cannot flood the
 * operators (each request is an audit entry and a webhook), and no real holder needs more.
 */
export const MAX_PENDING_REQUESTS = 50;

/** A key with MAX_PENDING_REQUESTS pending: nothing was recorded (409 `conflict` where it reaches an API). */
export class TooManyPending extends ApiError {
  constructor() {
    super('conflict', {}, undefined, `This key has ${MAX_PENDING_REQUESTS} requests waiting for your provider's decision: ask again once they are decided.`);
  }
}

/** What makes two pending requests of one key the same request: the account and the change (countries as a set). */
export const sameRequestKey = (accountId: string, change: RequestChange): string =>
  JSON.stringify([accountId, 'tier' in change ? { tier: change.tier } : { countries: [...change.countries].sort() }]);

/** The creation time (ms) a request id carries (newRequestId). */
export const createdMsOf = (id: string): number => Number(id.slice(4, 17));

export const unknownRequest = (id: string): ApiError => new ApiError('not_found', {}, undefined, `No request with id "${id}".`);
export const alreadyDecided = (r: SubscriptionRequest): ApiError =>
  new ApiError('conflict', {}, undefined, `Request "${r.id}" was already ${r.status}${r.decidedBy ? ` by ${r.decidedBy}` : ''}.`);
