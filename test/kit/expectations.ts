/**
 * Assertions for the contract's answers (error bodies and headers, keyed successes, rate-limit
 * headers) and for secrets kept out of logs.
 */
import { ERROR_CATALOGUE, type ErrorCode } from '../../gateway/errors';
import type { Stack } from './gateways';
import type { Answer } from './http-send';
import { MIN_SEARCHABLE_SECRET } from './keys-files';

/** The headers every answer must (not) carry. */
export function expectCommonHeaders(a: Answer): void {
  expect(a.headers['x-powered-by']).toBeUndefined();
  expect(a.headers['x-request-id']).toEqual(expect.stringMatching(/\S/));
}

/**
 * Asserts an error answer of the contract: status of the code, JSON, body exactly
 * `{error, message}` plus `extras`, `Cache-Control: no-store`, no `X-Powered-By`, `Retry-After` on
 * 429/503 (whole seconds, ≥ 1), `Allow: GET` on 405. Returns the body.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export function expectError(a: Answer, code: ErrorCode, extras: Record<string, unknown> = {}): any {
  const status = ERROR_CATALOGUE[code].status;
  expect({ status: a.status, body: a.body ?? a.text }).toEqual({
    status,
    body: { error: code, message: expect.any(String), ...extras },
  });
  expect(Object.keys(a.body).sort()).toEqual(['error', 'message', ...Object.keys(extras)].sort());
  expect((a.body as { message: string }).message.length).toBeGreaterThan(0);
  expect(a.headers['content-type']).toMatch(/^application\/json/);
  expect(a.headers['cache-control']).toBe('no-store');
  expectCommonHeaders(a);
  if (status === 429 || status === 503) expectRetryAfter(a);
  if (status === 405) expect(a.headers.allow).toBe('GET');
  return a.body;
}

/** `Retry-After` present, whole seconds, at least 1. Returns the number. */
export function expectRetryAfter(a: Answer): number {
  const value = a.headers['retry-after'];
  expect(value).toEqual(expect.stringMatching(/^[0-9]+$/));
  const seconds = Number(value);
  expect(seconds).toBeGreaterThanOrEqual(1);
  return seconds;
}

/** Successful keyed answer: 200, JSON, rate-limit headers, request id. */
export function expectKeyedSuccess(a: Answer): void {
  expect({ status: a.status, body: a.body ?? a.text }).toEqual({ status: 200, body: expect.anything() });
  expect(a.headers['content-type']).toMatch(/^application\/json/);
  expect(a.headers['ratelimit-policy']).toEqual(expect.stringMatching(/\S/));
  expect(a.headers.ratelimit).toEqual(expect.stringMatching(/\S/));
  expectCommonHeaders(a);
}

/** The `r=` (remaining) of one window in a `RateLimit` header, e.g. `"day";r=1;t=5000`. */
export function remainingIn(a: Answer, window: 'minute' | 'day' | 'month'): number | undefined {
  const header = a.headers.ratelimit;
  if (typeof header !== 'string') return undefined;
  const m = new RegExp(`"?${window}"?;r=(\\d+)`).exec(header);
  return m ? Number(m[1]) : undefined;
}

/** Every property name anywhere in a JSON value. */
export function allPropertyNames(value: unknown, out = new Set<string>()): Set<string> {
  if (Array.isArray(value)) for (const v of value) allPropertyNames(v, out);
  else if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      out.add(k);
      allPropertyNames(v, out);
    }
  }
  return out;
}

/**
 * Lines of `lines` that contain any of `secrets`, as written or JSON-escaped (as a log line would
 * hold it). Secrets shorter than MIN_SEARCHABLE_SECRET are skipped.
 */
export function linesWithSecrets(lines: readonly string[], secrets: readonly string[]): string[] {
  const needles = secrets
    .filter((s) => s.length >= MIN_SEARCHABLE_SECRET)
    .flatMap((s) => [s, JSON.stringify(s).slice(1, -1), encodeURIComponent(s)]);
  return lines.filter((line) => needles.some((n) => line.includes(n)));
}

/**
 * Stops the stack and checks its gateways' output: requests were logged (so the check below saw a
 * real log, not an empty capture), and no line holds any of its key values.
 */
export async function expectNoKeyValueLogged(stack: Stack): Promise<void> {
  await stack.stop();
  const lines = stack.gatewayOutput();
  expect(lines.some((line) => line.includes('"msg":"answered"'))).toBe(true);
  expect(linesWithSecrets(lines, stack.keyValues())).toEqual([]);
}
