import { randomBytes } from 'node:crypto';
import { safeJson } from '../output/safe-text';

/** The event types of the catalogue (README "Quota notifications and key events"). */
export type WebhookEventType =
  | 'quota.threshold'
  | 'key.created'
  | 'key.changed'
  | 'key.paused'
  | 'key.settled'
  | 'key.revoked'
  | 'key.rolled'
  | 'key.deleted'
  | 'key.leaked'
  | 'subscription.requested'
  | 'subscription.approved'
  | 'subscription.declined';

/**
 * One event. `id` is the `webhook-id` of every delivery attempt (receivers de-duplicate on it); the
 * body sent is `{type, timestamp, data}`. `data` carries ids, windows, counts, limits and times,
 * never a key value, hash or token.
 */
export interface WebhookEvent {
  readonly id: string;
  readonly type: WebhookEventType;
  /** When the event happened (RFC 3339, UTC). */
  readonly timestamp: string;
  readonly data: Readonly<Record<string, unknown>>;
}

/** A new event with a fresh id (`msg_` + 24 random bytes, base64url, as Standard Webhooks suggests). */
export function newEvent(type: WebhookEventType, data: Record<string, unknown>, nowMs = Date.now()): WebhookEvent {
  return { id: `msg_${randomBytes(18).toString('base64url')}`, type, timestamp: new Date(nowMs).toISOString(), data };
}

/**
 * The request body of a delivery. Operator-set text (a note, a pause reason) keeps its value, but
 * its control, C1 and bidi characters are sent as `\uXXXX` escapes, never raw: a receiver that logs
 * or shows the body as text is not steered by them (gateway/output/safe-text.ts).
 */
export const eventBody = (e: WebhookEvent): string => safeJson({ type: e.type, timestamp: e.timestamp, data: e.data });

/** Where key events go (the key admin emits them; the webhook queue takes them). */
export type KeyEventSink = (type: Exclude<WebhookEventType, 'quota.threshold'>, data: Record<string, unknown>) => Promise<void>;
