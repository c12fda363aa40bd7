import pino, { type Logger } from 'pino';
import { carriesKey, KEY_PREFIX } from './keys/key-format';

/** The process logger. Asynchronous destination: a slow stdout never blocks a request. */
export function createLogger(level: string): Logger {
  return pino(
    { level, base: { service: 'gateway' }, timestamp: pino.stdTimeFunctions.isoTime },
    pino.destination({ sync: false, minLength: 0 }),
  );
}

const LOGGED_QUERY_PARAMETERS = new Set(['country', 'listing_type', 'property_type', 'limit']);

/**
 * The URL as logged: the path, and of the query only known parameter names with the (short) values
 * of the filters. A cursor's value, and any unknown name or value (a key pasted as `?api_key=…` or as a
 * bare `?<key>`), is logged as `[redacted]`.
 */
export function loggableUrl(url: string, callerKey?: string | string[]): string {
  const q = url.indexOf('?');
  if (q < 0) return loggablePath(url, callerKey);
  const parts = url
    .slice(q + 1)
    .split('&')
    .slice(0, 20)
    .map((pair) => {
      const eq = pair.indexOf('=');
      const name = eq < 0 ? pair : pair.slice(0, eq);
      // A filter's value is logged only when it is short, as every valid value is: a key pasted
      // as `country=<key>` must not reach the log either.
      if (LOGGED_QUERY_PARAMETERS.has(name)) return pair.length - name.length <= 13 ? pair : `${name}=[redacted]`;
      return name === 'cursor' ? 'cursor=[redacted]' : '[redacted]';
    });
  return `${loggablePath(url.slice(0, q), callerKey)}?${parts.join('&')}`;
}

/** A key in the project's format, as sent or percent-encoded. */
const KEY_IN_PATH = new RegExp(`${KEY_PREFIX}[^/?]*`, 'g');

/** The path as logged: at most 512 characters, any key in it (the caller's, or in the project's format) `[redacted]`. */
function loggablePath(path: string, callerKey?: string | string[]): string {
  let out = path;
  if (typeof callerKey === 'string') {
    for (const form of [callerKey, encodeURIComponent(callerKey)]) if (carriesKey(out, form)) out = out.split(form).join('[redacted]');
  }
  out = out.replace(KEY_IN_PATH, '[redacted]');
  // Redacted before it is cut, so no part of a key survives at the cut.
  return out.length > 512 ? `${out.slice(0, 512)}…` : out;
}
