import { createHmac } from 'node:crypto';

/**
 * What the insights service learns about the caller: never the key, but who the gateway let
 * through. Two headers on every forwarded request:
 *
 *   X-Listings-Caller:           base64url(JSON {key_id, tier, countries, request_id, iat})
 *   X-Listings-Caller-Signature: v1=base64url(HMAC-SHA256(INSIGHTS_IDENTITY_SECRET, <X-Listings-Caller as sent>))
 *
 * The insights service must: recompute the HMAC over the header value exactly as received and
 * compare in constant time (refuse the request otherwise); refuse an `iat` (seconds since the epoch)
 * more than 60 s away from its clock (replay); check that `request_id` equals the `X-Request-Id`
 * header; and apply `tier` and `countries` itself to whatever it answers (the gateway refuses a
 * `country` parameter outside the key's countries, but only the service knows what else in its
 * query selects data). The secret is shared by the gateway instances and the insights service only.
 */
export const CALLER_HEADER = 'x-listings-caller';
export const CALLER_SIGNATURE_HEADER = 'x-listings-caller-signature';

export interface CallerIdentity {
  readonly keyId: string;
  readonly tier: string;
  readonly countries: Iterable<string>;
}

export type IdentitySigner = (caller: CallerIdentity, requestId: string, nowMs?: number) => Record<string, string>;

export function createIdentitySigner(secret: Buffer): IdentitySigner {
  return (caller, requestId, nowMs = Date.now()) => {
    const claims = { key_id: caller.keyId, tier: caller.tier, countries: [...caller.countries].sort(), request_id: requestId, iat: Math.floor(nowMs / 1000) };
    const identity = Buffer.from(JSON.stringify(claims)).toString('base64url');
    const signature = createHmac('sha256', secret).update(identity).digest('base64url');
    return { [CALLER_HEADER]: identity, [CALLER_SIGNATURE_HEADER]: `v1=${signature}` };
  };
}
