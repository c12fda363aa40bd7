import { ApiError } from '../errors';

/** Everything that can come of one call to the data service, as a value. */
export type UpstreamFailure =
  | { readonly kind: 'unreachable' } // connection refused or reset before an answer, DNS failure
  | { readonly kind: 'timeout' } // no complete answer within UPSTREAM_TIMEOUT_MS
  | { readonly kind: 'unavailable'; readonly retryAfterSeconds?: number } // the data service said 503
  | { readonly kind: 'not_found' } // the data service does not know the listing
  | { readonly kind: 'server_error'; readonly status: number } // any other non-2xx
  | { readonly kind: 'unreadable' } // a 2xx whose body is cut, not JSON, or not the expected shape
  | { readonly kind: 'aborted' }; // the caller went away; nobody is left to answer

/** Seconds a caller is told to wait when the data service is down or slow. */
export const UPSTREAM_RETRY_AFTER_SECONDS = 5;

/**
 * The one table from upstream outcome to public error (docs/reference.md, error codes). Pure. Nothing of the
 * upstream's own body, status text or address is carried into the answer.
 */
export function errorForUpstream(failure: UpstreamFailure): ApiError {
  switch (failure.kind) {
    case 'unreachable':
    case 'timeout':
      return new ApiError('service_unavailable', {}, UPSTREAM_RETRY_AFTER_SECONDS).fromUpstream(failure.kind);
    case 'unavailable':
      return new ApiError('service_unavailable', {}, failure.retryAfterSeconds ?? UPSTREAM_RETRY_AFTER_SECONDS).fromUpstream(failure.kind);
    case 'not_found':
      return new ApiError('not_found', {}, undefined, 'No published listing with this id exists in this country.').because('listing_not_found');
    case 'server_error':
    case 'unreadable':
    case 'aborted':
      return new ApiError('internal_error').fromUpstream(failure.kind);
  }
}

/** A data service's `Retry-After`, if it is a sane number of seconds (1 s to 1 h). */
export function parseRetryAfter(value: string | string[] | undefined): number | undefined {
  if (typeof value !== 'string' || !/^\d{1,4}$/.test(value)) return undefined;
  const seconds = Number(value);
  return seconds >= 1 && seconds <= 3600 ? seconds : undefined;
}
