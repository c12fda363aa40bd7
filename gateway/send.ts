import type { ServerResponse } from 'node:http';
import { ApiError, errorBody } from './errors';

/** Writes a JSON answer with an exact Content-Length. */
export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  sendJsonText(res, status, JSON.stringify(body));
}

/** Writes JSON text already serialised (valid JSON is the caller's guarantee). */
export function sendJsonText(res: ServerResponse, status: number, text: string): void {
  res.statusCode = status;
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', Buffer.byteLength(text));
  res.end(text);
}

/** Writes JSON bytes already encoded (valid JSON in UTF-8 is the caller's guarantee). */
export function sendJsonBytes(res: ServerResponse, status: number, bytes: Buffer): void {
  res.statusCode = status;
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', bytes.length);
  res.end(bytes);
}

/**
 * Writes an error answer made from the catalogue: the contract's body, `Cache-Control: no-store`,
 * `Retry-After` on 429 and 503 (whole seconds, at least 1), `Allow` on 405 (the public surface: GET).
 */
export function sendError(res: ServerResponse, err: ApiError, allow = 'GET'): void {
  res.setHeader('Cache-Control', 'no-store');
  if (err.status === 429 || err.status === 503) res.setHeader('Retry-After', String(Math.max(1, Math.ceil(err.retryAfterSeconds ?? 1))));
  if (err.status === 405) res.setHeader('Allow', allow);
  sendJson(res, err.status, errorBody(err));
}
