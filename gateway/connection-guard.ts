import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Logger } from 'pino';

/**
 * Most requests one connection may have taken up and not yet answered in full (in progress, or
 * answered and queued behind an earlier answer). While a connection has this many, the gateway
 * stops reading it; it reads again as answers leave.
 */
export const MAX_PIPELINED_REQUESTS = 16;
/**
 * Most requests one connection may have parsed and waiting to be taken up. Node parses a whole read
 * (up to 64 KiB) at once, so a client that pipelines many small requests in one write lands more
 * than the cap in one go: they wait, in order, and are taken up as answers leave. Past this bound
 * the rest of that read is not taken up, and the connection is closed once every request taken up
 * or waiting has been answered (the client sends the rest again on a new connection, as HTTP/1.1
 * pipelining clients do when a server closes).
 */
export const MAX_WAITING_REQUESTS = 512;
/** How often connections with unfinished answers are checked for a stalled write. */
const SWEEP_INTERVAL_MS = 500;

export interface ConnectionGuardOptions {
  /** A connection whose answers are written but make no progress to the client for this long is closed. */
  readonly writeStallTimeoutMs: number;
  readonly logger?: Logger;
}

interface Connection {
  readonly socket: Socket;
  /** Responses taken up on this connection and not yet closed, oldest first. */
  readonly pending: Set<ServerResponse>;
  /** Requests parsed and not yet taken up, oldest first. */
  readonly waiting: [IncomingMessage, ServerResponse][];
  /** Reading stopped by the guard (the cap is reached or requests wait). */
  holding: boolean;
  /** More requests arrived than may wait: nothing more is taken up, and the connection ends after the last answer. */
  ending: boolean;
  /** Bytes handed to the kernel so far, and since when that number has not moved. */
  flushed: number;
  since: number;
  closed: boolean;
  /** Set when the guard cuts the connection (stalled write), so it says why once. */
  cut: boolean;
}

/**
 * Wraps a request listener with the connection rules Node's HTTP server lacks:
 *
 * - back-pressure on pipelining: at most MAX_PIPELINED_REQUESTS requests of a connection are taken
 *   up at once; while that many are, the socket is not read, and requests already parsed wait (in
 *   order, at most MAX_WAITING_REQUESTS) to be taken up as answers leave. Every request taken up is
 *   answered; answers leave in request order (Node queues them);
 * - a stalled-write timeout: once the app has written an answer, the client must take bytes at
 *   least once per `writeStallTimeoutMs`, or the connection is closed (a client that pipelines and
 *   never reads would otherwise hold every queued answer in memory for as long as it likes);
 * - every response the app was given ends with exactly one `close` event: older Node versions emit
 *   none for an answer still queued behind another when the connection dies (it never got the
 *   socket), so the log line and metrics written on `close` were lost. Here such a response is
 *   destroyed and its `close` emitted when the connection closes, once.
 *
 * While a connection is held (not read), the gateway learns that its client went away only when it
 * next writes an answer to it; the answers in progress end as usual (their upstream timeouts bound
 * them), and the requests waiting are never taken up.
 */
export function guardConnections(app: RequestListener, options: ConnectionGuardOptions): { listener: RequestListener; stop(): void } {
  const connections = new Map<Socket, Connection>();
  const logger = options.logger;

  const cut = (conn: Connection): void => {
    if (conn.cut) return;
    conn.cut = true;
    logger?.warn(
      { ip: conn.socket.remoteAddress, pending: conn.pending.size, waiting: conn.waiting.length, reason: 'stalled_write' },
      'connection closed: stalled write (the client stopped reading)',
    );
    conn.socket.destroy();
  };

  const track = (socket: Socket): Connection => {
    const conn: Connection = { socket, pending: new Set(), waiting: [], holding: false, ending: false, flushed: 0, since: Date.now(), closed: false, cut: false };
    connections.set(socket, conn);
    // Node resumes the socket after every request it parses and whenever its output drains; while
    // the guard holds the connection, it stops reading again at once (the `resume` event comes
    // before any read).
    socket.on('resume', () => {
      if (conn.holding && !conn.closed) socket.pause();
    });
    socket.once('close', () => {
      conn.closed = true;
      connections.delete(socket);
      // Responses that never got the socket (queued behind another) get no `close` from Node.
      for (const res of conn.pending) if (!res.socket) closeQueued(res);
      conn.pending.clear();
      // Never taken up: Node destroys their responses; nothing was logged for them.
      conn.waiting.length = 0;
    });
    return conn;
  };

  const takeUp = (conn: Connection, req: IncomingMessage, res: ServerResponse): void => {
    conn.pending.add(res);
    res.once('close', () => {
      conn.pending.delete(res);
      if (!conn.closed) next(conn);
    });
    app(req, res);
  };

  /** An answer left: take up waiting requests while there is room, then read again (or end). */
  const next = (conn: Connection): void => {
    while (conn.pending.size < MAX_PIPELINED_REQUESTS && conn.waiting.length) {
      const [req, res] = conn.waiting.shift()!;
      takeUp(conn, req, res);
    }
    if (conn.pending.size >= MAX_PIPELINED_REQUESTS || conn.waiting.length) return;
    if (conn.ending) {
      if (conn.pending.size === 0) finish(conn);
      return;
    }
    if (conn.holding) {
      conn.holding = false;
      conn.socket.resume();
    }
  };

  /**
   * Ends a connection after its last answer: the write side is shut (the client reads every answer,
   * then the end), and the socket destroyed if the client has not closed it within the stalled-write
   * timeout.
   */
  const finish = (conn: Connection): void => {
    conn.socket.end();
    setTimeout(() => conn.socket.destroy(), options.writeStallTimeoutMs).unref();
  };

  const hold = (conn: Connection): void => {
    if (conn.holding) return;
    conn.holding = true;
    conn.socket.pause();
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
        cut(conn);
      }
    }
  }, SWEEP_INTERVAL_MS);
  sweep.unref();

  function listener(req: IncomingMessage, res: ServerResponse): void {
    const socket = req.socket;
    const conn = connections.get(socket) ?? track(socket);
    // The rest of a read buffer is still parsed after a cut or past the waiting bound: not taken up.
    if (conn.cut || conn.closed || conn.ending || socket.destroyed) return;
    if (conn.pending.size < MAX_PIPELINED_REQUESTS && conn.waiting.length === 0) {
      takeUp(conn, req, res);
      if (conn.pending.size >= MAX_PIPELINED_REQUESTS) hold(conn);
      return;
    }
    hold(conn);
    if (conn.waiting.length < MAX_WAITING_REQUESTS) {
      conn.waiting.push([req, res]);
      return;
    }
    conn.ending = true;
    logger?.warn(
      { ip: socket.remoteAddress, pending: conn.pending.size, waiting: conn.waiting.length, reason: 'pipelining_cap' },
      'connection ends after its answers: more pipelined requests than may wait',
    );
  }

  return { listener, stop: () => clearInterval(sweep) };
}

/**
 * Ends a response that will never be sent: destroyed (its output is dropped), then its one `close`.
 * Recent Node versions emit that `close` themselves on the next tick; older ones never do.
 */
function closeQueued(res: ServerResponse): void {
  let closed = false;
  res.once('close', () => (closed = true));
  res.destroy();
  setImmediate(() => {
    if (!closed) res.emit('close');
  });
}
