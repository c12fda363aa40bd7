import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Logger } from 'pino';

/**
 * Most requests one connection may have taken up and not yet answered in full (in progress, or
 * answered and queued behind an earlier answer). HTTP/1.1 clients that pipeline at all send a few;
 * browsers send one at a time. Past it the connection is closed and the request is not taken up.
 */
export const MAX_PIPELINED_REQUESTS = 16;
/** How often connections with unfinished answers are checked for a stalled write. */
const SWEEP_INTERVAL_MS = 500;

export interface ConnectionGuardOptions {
  /** A connection whose answers are written but make no progress to the client for this long is closed. */
  readonly writeStallTimeoutMs: number;
  readonly logger?: Logger;
}

interface Connection {
  /** Responses taken up on this connection and not yet closed, oldest first. */
  readonly pending: Set<ServerResponse>;
  /** Bytes handed to the kernel so far, and since when that number has not moved. */
  flushed: number;
  since: number;
  closed: boolean;
  /** Set when the guard closes the connection, so it says why once. */
  cut?: 'pipelining_cap' | 'stalled_write';
}

/**
 * Wraps a request listener with the connection rules Node's HTTP server lacks:
 *
 * - a cap on pipelined requests per connection (MAX_PIPELINED_REQUESTS);
 * - a stalled-write timeout: once the app has written an answer, the client must take bytes at
 *   least once per `writeStallTimeoutMs`, or the connection is closed (a client that pipelines and
 *   never reads would otherwise hold every queued answer in memory for as long as it likes);
 * - every response the app was given ends with exactly one `close` event: Node emits none for an
 *   answer still queued behind another when the connection dies (it never got the socket), so the
 *   log line and metrics written on `close` were lost. Here such a response is destroyed and its
 *   `close` emitted when the connection closes.
 */
export function guardConnections(app: RequestListener, options: ConnectionGuardOptions): { listener: RequestListener; stop(): void } {
  const connections = new Map<Socket, Connection>();
  const logger = options.logger;

  const cut = (socket: Socket, conn: Connection, reason: 'pipelining_cap' | 'stalled_write'): void => {
    if (conn.cut) return;
    conn.cut = reason;
    logger?.warn(
      { ip: socket.remoteAddress, pending: conn.pending.size, reason },
      reason === 'pipelining_cap' ? 'connection closed: pipelined requests over the cap' : 'connection closed: stalled write (the client stopped reading)',
    );
    socket.destroy();
  };

  const track = (socket: Socket): Connection => {
    const conn: Connection = { pending: new Set(), flushed: 0, since: Date.now(), closed: false };
    connections.set(socket, conn);
    socket.once('close', () => {
      conn.closed = true;
      connections.delete(socket);
      // Responses that never got the socket (queued behind another) get no `close` from Node.
      for (const res of conn.pending) if (!res.socket) closeQueued(res);
      conn.pending.clear();
    });
    return conn;
  };

  const sweep = setInterval(() => {
    const now = Date.now();
    for (const [socket, conn] of connections) {
      // Bytes are waiting for the client: an answer the app has written, or output in the socket's
      // buffer (Node stops reading further pipelined requests until that buffer drains).
      let written = socket.writableLength > 0;
      for (const res of conn.pending) if (res.writableEnded) written = true;
      const flushed = socket.bytesWritten - socket.writableLength;
      if (!written || flushed !== conn.flushed) {
        conn.flushed = flushed;
        conn.since = now;
      } else if (now - conn.since >= options.writeStallTimeoutMs) {
        cut(socket, conn, 'stalled_write');
      }
    }
  }, SWEEP_INTERVAL_MS);
  sweep.unref();

  function listener(req: IncomingMessage, res: ServerResponse): void {
    const socket = req.socket;
    const conn = connections.get(socket) ?? track(socket);
    // The rest of a read buffer is still parsed after a cut: those requests are not taken up.
    if (conn.cut || conn.closed || socket.destroyed) return;
    if (conn.pending.size >= MAX_PIPELINED_REQUESTS) {
      cut(socket, conn, 'pipelining_cap');
      return;
    }
    conn.pending.add(res);
    res.once('close', () => conn.pending.delete(res));
    app(req, res);
  }

  return { listener, stop: () => clearInterval(sweep) };
}

/** Ends a response that will never be sent: destroyed (its output is dropped), then its one `close`. */
function closeQueued(res: ServerResponse): void {
  res.destroy();
  res.emit('close');
}
