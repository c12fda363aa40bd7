import { Webhook } from 'standardwebhooks';
import { eventBody, type WebhookEvent } from './webhook-event';

export interface SignedDelivery {
  readonly body: string;
  readonly headers: Record<'webhook-id' | 'webhook-timestamp' | 'webhook-signature' | 'content-type', string>;
}

/**
 * Signs per the Standard Webhooks specification with the `standardwebhooks` library: HMAC-SHA256
 * over `id.timestamp.body` with the secret (`whsec_` + base64). Each attempt is signed with its own
 * timestamp (receivers refuse stale ones); the id stays the event's.
 */
export function createSigner(secret: string): (event: WebhookEvent, nowMs?: number) => SignedDelivery {
  const webhook = new Webhook(secret);
  return function sign(event, nowMs = Date.now()) {
    const body = eventBody(event);
    const at = new Date(Math.floor(nowMs / 1000) * 1000);
    return {
      body,
      headers: {
        'content-type': 'application/json',
        'webhook-id': event.id,
        'webhook-timestamp': String(at.getTime() / 1000),
        'webhook-signature': webhook.sign(event.id, at, body),
      },
    };
  };
}
