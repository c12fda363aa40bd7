import pino, { type Logger } from 'pino';
import { isListingId, LISTING_TYPES, PROPERTY_TYPES } from './validation/query';
import { LOG_FORMAT } from './log-format';

/**
 * A serialized error without `command`: ioredis attaches the failed command with its arguments to
 * an error reply, and those are key names holding a key's hash, records, script arguments. Nested
 * errors (a cluster's `lastNodeError`, a `cause`) lose theirs too.
 */
function withoutCommand(serialized: Record<string, unknown>): Record<string, unknown> {
  const { command: _command, ...rest } = serialized;
  for (const [name, value] of Object.entries(rest)) {
    if (typeof value === 'object' && value !== null && 'stack' in value) rest[name] = withoutCommand(value as Record<string, unknown>);
  }
  return rest;
}

/** Log lines are written to stdout once this many bytes are waiting... */
const LOG_BATCH_BYTES = 4096;
/** ...or this often, whichever comes first: a line waits at most this long in memory. */
export const LOG_FLUSH_MS = 100;

/**
 * stdout, written in batches: lines wait in memory until 4 KiB are pending or 100 ms have passed.
 * Each write is a job for libuv's thread pool (a copy, a queue, a thread woken): one per line cost
 * ~50 µs of CPU per request at 10 concurrent callers, a third of the gateway's (A/B of two builds,
 * 176 → 126 µs/req; `npm run bench`'s logging lever). At 50 callers lines already queue behind the
 * write in flight, so the gain there is small. What it costs: a process killed with SIGKILL loses
 * up to 100 ms of lines; every orderly exit and fatal error flushes first (startup/shutdown.ts).
 */
export function batchedStdout(): pino.DestinationStream {
  const destination = pino.destination({ sync: false, minLength: LOG_BATCH_BYTES });
  // Nothing pending (sonic-boom's `_len`, bytes waiting): no empty write. Once ended, nothing to flush.
  const state = destination as unknown as { readonly _len?: number; readonly destroyed?: boolean };
  setInterval(() => {
    if (!state.destroyed && state._len !== 0) destination.flush();
  }, LOG_FLUSH_MS).unref();
  return destination;
}

/** The process logger. Asynchronous, batched destination by default: a slow stdout never blocks a request. */
export function createLogger(level: string, destination: pino.DestinationStream = batchedStdout()): Logger {
  return pino(
    {
      level,
      base: { service: 'gateway' },
      ...LOG_FORMAT,
      serializers: { err: (err: unknown) => (err instanceof Error ? withoutCommand(pino.stdSerializers.err(err) as unknown as Record<string, unknown>) : err) },
    },
    destination,
  );
}

/**
 * The redaction rule, decided once: the URL is logged as an allow-list, never by searching it for
 * secrets. A part of it is logged as sent only when it is known to be valid for the route; every
 * other part is replaced by `[redacted]`, whatever its spelling (percent-encoded, double-encoded,
 * in the project's key format or not, with or without an `x-api-key` header):
 *
 * - a path segment: the fixed words of the surface (`v1`, `properties`, `docs`, the asset names…);
 *   a path parameter (a listing id, an insights sub-path segment) only when it is written in the
 *   id alphabet without escapes AND the answer was a success, i.e. the upstream knew it: a listing
 *   id cannot be told from a key by its spelling, but a pasted key is never a found listing;
 * - a query pair: a filter name of the surface with a value the filter accepts (`country` two
 *   letters, `listing_type`, `property_type`, `limit`); `cursor` always `cursor=[redacted]`;
 *   a known name with any other value `name=[redacted]`; anything else `[redacted]`.
 */
const REDACTED = '[redacted]';
const PATH_WORDS = new Set([
  'v1', 'ping', 'properties', 'insights', 'openapi.json', 'docs', 'assets',
  'swagger-ui.css', 'swagger-ui-bundle.js', 'init.js', 'favicon-32x32.png', 'favicon-16x16.png',
]);
/** A path parameter as sent: the id alphabet, no escapes. */
const PLAIN_ID = /^[A-Za-z0-9._~-]+$/;
const QUERY_VALUE: Readonly<Record<string, (value: string) => boolean>> = {
  country: (v) => /^[A-Za-z]{2}$/.test(v),
  listing_type: (v) => (LISTING_TYPES as readonly string[]).includes(v),
  property_type: (v) => (PROPERTY_TYPES as readonly string[]).includes(v),
  limit: (v) => /^[0-9]{1,3}$/.test(v),
  cursor: () => false,
};
const MAX_SEGMENTS = 16;
const MAX_PAIRS = 20;

/** One path segment as logged. `found`: the answer was a success, so a parameter was a real one. */
function loggableSegment(segment: string, found: boolean): string {
  if (segment === '' || PATH_WORDS.has(segment)) return segment;
  return found && PLAIN_ID.test(segment) && isListingId(segment) ? segment : REDACTED;
}

function loggablePair(pair: string): string {
  const eq = pair.indexOf('=');
  const name = eq < 0 ? pair : pair.slice(0, eq);
  if (!Object.hasOwn(QUERY_VALUE, name)) return REDACTED;
  return eq >= 0 && QUERY_VALUE[name]!(pair.slice(eq + 1)) ? pair : `${name}=${REDACTED}`;
}

/**
 * The URL as logged (see the rule above). `succeeded`: the request was answered with a success
 * (2xx or 304), so its path parameters were known to the gateway or its upstream.
 */
export function loggableUrl(url: string, succeeded = false): string {
  const q = url.indexOf('?');
  const path = q < 0 ? url : url.slice(0, q);
  const segments = path.split('/');
  let logged = segments.slice(0, MAX_SEGMENTS).map((s) => loggableSegment(s, succeeded)).join('/');
  if (segments.length > MAX_SEGMENTS) logged += `/${REDACTED}`;
  if (q < 0) return logged;
  const pairs = url.slice(q + 1).split('&');
  const query = pairs.slice(0, MAX_PAIRS).map(loggablePair);
  if (pairs.length > MAX_PAIRS) query.push(REDACTED);
  return `${logged}?${query.join('&')}`;
}
