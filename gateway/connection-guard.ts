import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Logger } from 'pino';
import { PipelinedConnection } from './pipelined-connection';

/** How often connections with unfinished answers are checked for a stalled write. */
const SWEEP_INTERVAL_MS = 500;

export interface ConnectionGuardOptions {
  /** A connection whose answers are written but make no progress to the client for this long is closed. */
  readonly writeStallTimeoutMs: number;
  readonly logger?: Logger;
}

interface Watched {
  readonly conn: PipelinedConnection;
  /** Bytes handed to the kernel so far, and since when that number has not moved. */
  flushed: number;
  since: number;
  /** Set when the guard cuts the connection (stalled write), so it says why once. */
  cut: boolean;
}

/**
 * Wraps a request listener with the connection rules Node's HTTP server lacks:
 *
 * - back-pressure on pipelining (pipelined-connection.ts): at most 16 requests of a connection are
 *   taken up at once; while that many are, the socket is not read, and requests already parsed
 *   wait (in order, at most 512) to be taken up as answers leave. Every request taken up is
 *   answered, in request order;
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
 * them), and the requests waiting are never taken up. A request whose head a read cut in two stays
 * incomplete while the connection is held, and Node's header timeout (server.ts, 10 s) still runs
 * for it: a connection held that long with such a request is dropped, as any slow head is.
 */
export function guardConnections(app: RequestListener, options: ConnectionGuardOptions): { listener: RequestListener; stop(): void; watched(): { connections: number; swept: number } } {
  const connections = new Map<Socket, Watched>();
  /**
   * The connections the sweep looks at: those given a request since they were last seen with
   * nothing in flight. An idle keep-alive connection leaves after one sweep, so idle connections
   * cost the sweep nothing (10,000 of them cost ~90 ms of CPU a second when every one was looked at).
   */
  const active = new Set<Watched>();
  const logger = options.logger;

  const cut = (w: Watched): void => {
    if (w.cut) return;
    w.cut = true;
    logger?.warn(
      { ip: w.conn.socket.remoteAddress, pending: w.conn.pending.size, waiting: w.conn.waitingCount, reason: 'stalled_write' },
      'connection closed: stalled write (the client stopped reading)',
    );
    w.conn.socket.destroy();
  };

  const track = (socket: Socket): Watched => {
    const w: Watched = { conn: new PipelinedConnection(socket, app, options.writeStallTimeoutMs, logger), flushed: 0, since: Date.now(), cut: false };
    connections.set(socket, w);
    socket.once('close', () => {
      connections.delete(socket);
      active.delete(w);
    });
    return w;
  };

  const sweep = setInterval(() => {
    const now = Date.now();
    for (const w of active) {
      const socket = w.conn.socket;
      // Bytes are waiting for the client: an answer the app has written, or output in the socket's
      // buffer (Node stops reading further pipelined requests until that buffer drains).
      let written = socket.writableLength > 0;
      for (const res of w.conn.pending) if (res.writableEnded) written = true;
      const flushed = socket.bytesWritten - socket.writableLength;
      if (!written && w.conn.pending.size === 0 && w.conn.waitingCount === 0) {
        active.delete(w); // nothing in flight: looked at again when its next request comes
        w.flushed = flushed;
        w.since = now;
      } else if (!written || flushed !== w.flushed) {
        w.flushed = flushed;
        w.since = now;
      } else if (now - w.since >= options.writeStallTimeoutMs) {
        cut(w);
      }
    }
  }, SWEEP_INTERVAL_MS);
  sweep.unref();

  function listener(req: IncomingMessage, res: ServerResponse): void {
    const socket = req.socket;
    const w = connections.get(socket) ?? track(socket);
    // The rest of a read buffer is still parsed after a cut: those requests are not taken up.
    if (w.cut || w.conn.closed || socket.destroyed) return;
    if (!active.has(w)) {
      w.flushed = socket.bytesWritten - socket.writableLength;
      w.since = Date.now();
      active.add(w);
    }
    w.conn.offer(req, res);
  }

  return { listener, stop: () => clearInterval(sweep), watched: () => ({ connections: connections.size, swept: active.size }) };
}
