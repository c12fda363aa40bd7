// gateway/policies/: the public path's policies, one rule a file, run by app.ts in the contract's order:
// authenticate, key in path, address, key state, tier (insights), limits, query, entitlement, cursor.
import { systemClock, type Clock } from '../clock';
import { ApiError } from '../errors';
import { isPlausibleKeyValue, sha256Hex } from '../keys/key-format';
import type { KeyStore } from '../keys/key-record';
import type { Keyed, Step } from '../pipeline';

/** Longer values are not keys (imported keys of any format fit); refused before hashing. */
const MAX_KEY_LENGTH = 1024;

/** Counts `x-api-key` header lines: Node joins repeated ones into one value, which must never authenticate. */
function apiKeyHeaderCount(rawHeaders: readonly string[]): number {
  let count = 0;
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i];
    if (name !== undefined && name.length === 9 && name.toLowerCase() === 'x-api-key') count++;
  }
  return count;
}

/** The `x-api-key` value when it is one plausible value (the checks `authenticate` makes before hashing), else undefined. */
function presentedValue(ctx: Parameters<Step>[0]): string | undefined {
  const value = ctx.req.headers['x-api-key'];
  if (typeof value !== 'string' || value.length === 0 || value.length > MAX_KEY_LENGTH) return undefined;
  if (apiKeyHeaderCount(ctx.req.rawHeaders) !== 1 || !isPlausibleKeyValue(value)) return undefined;
  return value;
}

/**
 * Whether the request presents a key this process already knows as usable (neither revoked nor
 * expired) with no round trip to the store (KeyStore.known): the refused-auth budget serves such a
 * key even for an address over its budget. False for a store that cannot tell synchronously.
 */
export function presentsKnownKey(store: KeyStore, clock: Clock = systemClock): (ctx: Parameters<Step>[0]) => boolean {
  return function presentsKnown(ctx) {
    if (!store.known) return false;
    const value = presentedValue(ctx);
    const record = value === undefined ? undefined : store.known(sha256Hex(value));
    return record !== undefined && record.status !== 'revoked' && (record.expiresAt === undefined || record.expiresAt > clock.now());
  };
}

/**
 * 401 `unauthenticated` unless `x-api-key` holds exactly one value whose SHA-256 names a key that is
 * neither revoked nor past its `expires_at`. Unknown, revoked and malformed keys get the same answer. A value with this project's
 * prefix and a bad checksum is refused without a store look-up. A store that cannot answer gives
 * 503 `service_unavailable`, never 401: a working key must not look revoked during an outage.
 */
export function authenticate(store: KeyStore, clock: Clock = systemClock): Step<object, Keyed> {
  // Every refusal says why in the log (never in the answer: all are the same 401 to the caller).
  const identify = (ctx: Parameters<Step>[0], lookup: Awaited<ReturnType<KeyStore['lookup']>>): void => {
    if (lookup.kind === 'unavailable') throw new ApiError('service_unavailable', {}, 1).because('key_store_unavailable');
    if (lookup.kind === 'not_found') {
      if (lookup.keyId !== undefined) ctx.refusedKeyId = lookup.keyId;
      throw new ApiError('unauthenticated').because(lookup.reason ?? 'unknown_key');
    }
    if (lookup.record.status === 'revoked') {
      ctx.refusedKeyId = lookup.record.id;
      throw new ApiError('unauthenticated').because('revoked');
    }
    // An expired key is refused like a revoked one (docs/guarantees.md); checked per request, so a cached record expires on time.
    if (lookup.record.expiresAt !== undefined && lookup.record.expiresAt <= clock.now()) {
      ctx.refusedKeyId = lookup.record.id;
      throw new ApiError('unauthenticated').because('expired');
    }
    ctx.key = lookup.record;
    ctx.keyValue = lookup.previous ? 'previous' : 'current';
  };
  return function authenticateKey(ctx) {
    const value = ctx.req.headers['x-api-key'];
    if (typeof value !== 'string' || value.length === 0) throw new ApiError('unauthenticated').because('no_key');
    if (value.length > MAX_KEY_LENGTH) throw new ApiError('unauthenticated').because('key_too_long');
    if (apiKeyHeaderCount(ctx.req.rawHeaders) !== 1) throw new ApiError('unauthenticated').because('key_header_repeated');
    if (!isPlausibleKeyValue(value)) throw new ApiError('unauthenticated').because('key_bad_checksum');
    const lookup = store.lookup(sha256Hex(value));
    // The file store and a cached Redis record answer synchronously: no promise on that path.
    // One that leaves the process (Redis) is a span of the request's trace when tracing is on.
    if (lookup instanceof Promise) {
      const span = ctx.trace?.step('keys.lookup');
      return lookup.then((found) => {
        span?.end(found.kind === 'unavailable' ? 'key_store_unavailable' : undefined);
        identify(ctx, found);
      });
    }
    identify(ctx, lookup);
  };
}
