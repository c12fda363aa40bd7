import { randomUUID } from 'node:crypto';
import http, { type RequestListener, type Server } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import { guardConnections } from './connection-guard';
import { ApiError, errorBody } from './errors';

/** A request whose head is not in within this time is dropped (slowloris). */
const HEADERS_TIMEOUT_MS = 10_000;
const REQUEST_TIMEOUT_MS = 30_000;
/** Longer than common load balancers' idle timeouts (60 s), so they close first. */
const KEEP_ALIVE_TIMEOUT_MS = 65_000;
/** Default stalled-write timeout (WRITE_STALL_TIMEOUT_MS): see connection-guard.ts. */
export const WRITE_STALL_TIMEOUT_MS = 30_000;

export interface ServerOptions {
  /** Logs a connection the guard closes (more pipelined requests than may wait, stalled write). */
  readonly logger?: Logger;
  readonly writeStallTimeoutMs?: number;
}

/** The catalogue's `invalid_parameter`, written raw: these requests never reach the gateway's pipeline. */
const MALFORMED_BODY = JSON.stringify(
  errorBody(new ApiError('invalid_parameter', { parameter: 'request' }, undefined, 'The request is malformed or too large.')),
);
const malformedRequestAnswer = (): string =>
  'HTTP/1.1 400 Bad Request\r\nContent-Type: application/json; charset=utf-8\r\nCache-Control: no-store\r\n' +
  `X-Request-Id: ${randomUUID()}\r\nConnection: close\r\nContent-Length: ${Buffer.byteLength(MALFORMED_BODY)}\r\n\r\n${MALFORMED_BODY}`;

/**
 * The HTTP server around the app. A request Node cannot parse (bad framing such as two
 * Content-Lengths or CL+TE, an oversized header block or URL) is answered with a JSON 400 and the
 * connection closed; a timed-out or reset connection is simply dropped. A pipelining connection is
 * not read while 16 of its requests are taken up, a client that stops reading is cut, and every
 * answer closes once (connection-guard.ts).
 */
export function createServer(app: RequestListener, options: ServerOptions = {}): Server {
  const guard = guardConnections(app, {
    writeStallTimeoutMs: options.writeStallTimeoutMs ?? WRITE_STALL_TIMEOUT_MS,
    ...(options.logger ? { logger: options.logger } : {}),
  });
  const server = http.createServer(
    {
      headersTimeout: HEADERS_TIMEOUT_MS,
      requestTimeout: REQUEST_TIMEOUT_MS,
      keepAliveTimeout: KEEP_ALIVE_TIMEOUT_MS,
      // Node checks the two timeouts above only this often (default 30 s, so a slow client could
      // hold a connection for up to 40 s instead of 10).
      connectionsCheckingInterval: 1000,
    },
    guard.listener,
  );
  server.on('close', () => guard.stop());
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => {
    if (!socket.writable || err.code === 'ECONNRESET' || err.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
      socket.destroy();
      return;
    }
    socket.end(malformedRequestAnswer());
  });
  return server;
}
