import { isIP } from 'node:net';
import type { RequestHandler } from 'express';
import { ApiError } from '../errors';

/** The host name of a Host header, lower case, without port, brackets or a final dot. */
export function hostName(header: string): string {
  const h = header.trim().toLowerCase();
  const name = h.startsWith('[') ? h.slice(1, h.indexOf(']') < 0 ? undefined : h.indexOf(']')) : h.split(':').length === 2 ? h.split(':')[0]! : h;
  return name.endsWith('.') ? name.slice(0, -1) : name;
}

const isLoopback = (name: string): boolean =>
  name === 'localhost' || name.endsWith('.localhost') || name === '::1' || (isIP(name) === 4 && name.startsWith('127.'));

/**
 * Against DNS rebinding: a browser led to this listener under another site's name sends that name
 * as `Host`. Only loopback names and addresses, the address the request came in on, and `allowed`
 * (ADMIN_HOST and ADMIN_ALLOWED_HOSTS) are answered; any other is 421 `misdirected_request`. A
 * request without `Host` (HTTP/1.0, no browser sends one) is let through.
 */
export function checkHost(allowed: readonly string[]): RequestHandler {
  const names = new Set(allowed.map(hostName));
  return function hostAllowed(req, _res, next) {
    const header = req.headers.host;
    if (header === undefined) return next();
    const name = hostName(header);
    const local = (req.socket.localAddress ?? '').replace(/^::ffff:/, '').toLowerCase();
    if (isLoopback(name) || name === local || names.has(name)) return next();
    throw new ApiError('misdirected_request', {}, undefined, 'This listener does not answer for that host name (set ADMIN_ALLOWED_HOSTS to add one).');
  };
}
