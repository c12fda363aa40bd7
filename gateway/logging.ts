import pino, { type Logger } from 'pino';

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
export function loggableUrl(url: string): string {
  const q = url.indexOf('?');
  if (q < 0) return url.length > 512 ? `${url.slice(0, 512)}…` : url;
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
  return `${url.slice(0, Math.min(q, 512))}?${parts.join('&')}`;
}
