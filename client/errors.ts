/** What the client throws: the service refused (`ListingsApiError`) or gave no usable answer (`ListingsNetworkError`). */

/** Every error code of part 7 of the interface. The service may add codes: `error` is any string. */
export const KNOWN_ERROR_CODES = [
  'invalid_cursor',
  'invalid_parameter',
  'unauthenticated',
  'country_not_entitled',
  'ip_not_allowed',
  'key_paused',
  'upgrade_required',
  'not_found',
  'method_not_allowed',
  'quota_exceeded',
  'rate_limited',
  'internal_error',
  'not_configured',
  'service_unavailable',
] as const;

export type KnownErrorCode = (typeof KNOWN_ERROR_CODES)[number];

export interface ApiErrorDetails {
  /** The code the service sent (branch on this); `http_<status>` when the answer carried none. */
  error: string;
  status: number;
  message: string;
  /** Seconds from the answer's `Retry-After`, when it had one. */
  retryAfter?: number;
  /** On `invalid_parameter`: the refused parameter. */
  parameter?: string;
  /** On `ip_not_allowed`: the address the service saw (the one to register for the key). */
  ip?: string;
  /** The answer's `X-Request-Id`: quote it when reporting a problem. */
  requestId?: string;
  /** How many requests were made before giving up (1 when the error was not retried). */
  attempts: number;
}

/** The service answered with an error, and retrying (part 7 of the interface) did not or could not help. */
export class ListingsApiError extends Error implements ApiErrorDetails {
  readonly error: string;
  readonly status: number;
  readonly retryAfter?: number;
  readonly parameter?: string;
  readonly ip?: string;
  readonly requestId?: string;
  readonly attempts: number;

  constructor(details: ApiErrorDetails) {
    super(details.message);
    this.name = 'ListingsApiError';
    this.error = details.error;
    this.status = details.status;
    this.attempts = details.attempts;
    if (details.retryAfter !== undefined) this.retryAfter = details.retryAfter;
    if (details.parameter !== undefined) this.parameter = details.parameter;
    if (details.ip !== undefined) this.ip = details.ip;
    if (details.requestId !== undefined) this.requestId = details.requestId;
  }

  /** True when `error` is one of the codes this client knows; false for a code added since. */
  get known(): boolean {
    return (KNOWN_ERROR_CODES as readonly string[]).includes(this.error);
  }
}

/** No usable answer: the connection failed or timed out, or a success answer was not the JSON expected. */
export class ListingsNetworkError extends Error {
  constructor(
    message: string,
    readonly attempts: number,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'ListingsNetworkError';
  }
}
