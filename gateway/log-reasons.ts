import type { AdminErrorCode, ErrorCode } from './errors';

/**
 * The `reason` logged with a refusal when the step that refused gave none: one per code, so every
 * refusal line has one. Steps that know more say more (`revoked`, `expired_grace`, `day_quota`,
 * `upstream_timeout`, `cursor_expired`...). Log only: the answer carries the code, never the reason.
 */
export const DEFAULT_REASON: Readonly<Record<ErrorCode | AdminErrorCode, string>> = {
  invalid_cursor: 'cursor_invalid',
  invalid_parameter: 'parameter_invalid',
  unauthenticated: 'key_invalid',
  country_not_entitled: 'country_not_in_subscription',
  ip_not_allowed: 'address_not_registered',
  key_paused: 'paused',
  upgrade_required: 'tier_standard',
  not_found: 'unknown_path',
  method_not_allowed: 'method_not_get',
  quota_exceeded: 'quota',
  rate_limited: 'minute_limit',
  internal_error: 'unexpected_error',
  not_configured: 'not_configured',
  service_unavailable: 'unavailable',
  forbidden: 'role_insufficient',
  conflict: 'state_conflict',
  misdirected_request: 'host_not_allowed',
};
