/**
 * The error catalogue: every code of part 7 of the interface, with its HTTP status and the
 * default message. Every error answer the gateway gives is made from this table.
 */
export const ERROR_CATALOGUE = {
  invalid_cursor: { status: 400, message: 'The cursor is malformed, expired, or was issued for another key or other filters; start again from the first page.' },
  invalid_parameter: { status: 400, message: 'A parameter is unknown, repeated, empty, malformed or out of range.' },
  unauthenticated: { status: 401, message: 'A valid API key is required in the x-api-key header.' },
  country_not_entitled: { status: 403, message: 'The country is not part of this key\'s subscription.' },
  ip_not_allowed: { status: 403, message: 'The request came from an address not registered for this key.' },
  key_paused: { status: 403, message: 'The key is paused; it resumes automatically once the payment is settled.' },
  upgrade_required: { status: 403, message: 'This endpoint belongs to the Advanced tier.' },
  not_found: { status: 404, message: 'Not found.' },
  method_not_allowed: { status: 405, message: 'Only GET is allowed.' },
  quota_exceeded: { status: 429, message: 'The daily or monthly quota of this key has been used.' },
  rate_limited: { status: 429, message: 'The per-minute request limit of this key has been reached.' },
  internal_error: { status: 500, message: 'An unexpected error occurred.' },
  not_configured: { status: 503, message: 'The service is not configured to accept this request yet.' },
  service_unavailable: { status: 503, message: 'The service is temporarily unable to answer; retry later.' },
} as const satisfies Record<string, { status: number; message: string }>;

export type ErrorCode = keyof typeof ERROR_CATALOGUE;
export const ERROR_CODES = Object.keys(ERROR_CATALOGUE) as ErrorCode[];

/**
 * Codes only the admin listener (admin API and console) answers with; never on the public port, so
 * they are not part of the public interface's catalogue. Same `{error, message}` form.
 */
export const ADMIN_ERROR_CATALOGUE = {
  forbidden: { status: 403, message: 'This operator token\'s role does not allow this action.' },
  conflict: { status: 409, message: 'The change conflicts with the current state (already decided, in use, or taken).' },
  misdirected_request: { status: 421, message: 'This listener does not answer for that host name.' },
} as const satisfies Record<string, { status: number; message: string }>;

export type AdminErrorCode = keyof typeof ADMIN_ERROR_CATALOGUE;
const ANY_CATALOGUE: Record<ErrorCode | AdminErrorCode, { status: number; message: string }> = { ...ERROR_CATALOGUE, ...ADMIN_ERROR_CATALOGUE };

/** Extra body fields some codes carry (docs/reference.md, error codes). */
export interface ErrorExtras {
  parameter?: string;
  ip?: string;
}

/**
 * The one error class. Policies throw it (or pass it to `next`); the error handler turns it into
 * the JSON answer. `retryAfterSeconds` becomes the `Retry-After` header (429 and 503 always carry one).
 */
export class ApiError extends Error {
  readonly status: number;
  /**
   * Why, for the log line only (never in the answer): what an operator needs to answer "why was I
   * refused?", e.g. `revoked`, `day_quota`, `upstream_timeout`. See gateway/log-reasons.ts.
   */
  reason?: string;
  /**
   * The kind of the failed call to a data service or the insights service that decided this answer
   * (`timeout`, `unreachable`...: gateway/upstream/outcome.ts), counted and logged as `upstream`.
   */
  upstream?: string;
  constructor(
    readonly code: ErrorCode | AdminErrorCode,
    readonly extras: ErrorExtras = {},
    readonly retryAfterSeconds?: number,
    message?: string,
  ) {
    super(message ?? ANY_CATALOGUE[code].message);
    this.name = 'ApiError';
    this.status = ANY_CATALOGUE[code].status;
  }

  /** Sets the logged reason; returns the error, so `throw new ApiError(...).because('revoked')`. */
  because(reason: string): this {
    this.reason = reason;
    return this;
  }

  /** An answer decided by a failed upstream call of `kind`: its kind, and the logged reason `upstream_<kind>`. */
  fromUpstream(kind: string): this {
    this.upstream = kind;
    return this.because(`upstream_${kind}`);
  }
}

/** The JSON body of an error answer: `error`, `message`, and the code's extra fields. */
export function errorBody(err: ApiError): Record<string, string> {
  return { error: err.code, message: err.message, ...err.extras };
}
