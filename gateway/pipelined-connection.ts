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

/**
 * One client connection's pipelined requests: at most MAX_PIPELINED_REQUESTS taken up (given to the
 * app) at once, the rest of what was read waiting in order; while the cap is reached or requests
 * wait, the socket is not read (held). Answers leave in request order (Node queues them).
 */
export class PipelinedConnection {
  /** Responses taken up and not yet closed, oldest first. */
  readonly pending = new Set<ServerResponse>();
  /** Requests parsed and not yet taken up, oldest first. */
  private readonly waiting: [IncomingMessage, ServerResponse][] = [];
  /** Reading stopped (the cap is reached or requests wait). */
  private holding = false;
  /** More requests arrived than may wait: nothing more is taken up; the connection ends after the last answer. */
  private ending = false;
  closed = false;

  constructor(
    readonly socket: Socket,
    private readonly app: RequestListener,
    /** How long a connection that ends after its answers may stay half-closed before it is destroyed. */
    private readonly lingerMs: number,
    private readonly logger?: Logger,
  ) {
    // Node resumes the socket after every request it parses and whenever its output drains; while
    // held, it stops reading again at once (the `resume` event comes before any read).
    socket.on('resume', () => {
      if (this.holding && !this.closed) socket.pause();
    });
    socket.once('close', () => {
      this.closed = true;
      // Responses that never got the socket (queued behind another) get no `close` from older Node versions.
      for (const res of this.pending) if (!res.socket) closeQueued(res);
      this.pending.clear();
      // Never taken up: Node destroys their responses; nothing was logged for them.
      this.waiting.length = 0;
    });
  }

  get waitingCount(): number {
    return this.waiting.length;
  }

  /** A request Node parsed on this connection: taken up now, or waiting its turn. */
  offer(req: IncomingMessage, res: ServerResponse): void {
    // The rest of a read buffer is still parsed past the waiting bound: not taken up.
    if (this.ending) return;
    if (this.pending.size < MAX_PIPELINED_REQUESTS && this.waiting.length === 0) {
      this.takeUp(req, res);
      if (this.pending.size >= MAX_PIPELINED_REQUESTS) this.hold();
      return;
    }
    this.hold();
    if (this.waiting.length < MAX_WAITING_REQUESTS) {
      this.waiting.push([req, res]);
      return;
    }
    this.ending = true;
    this.logger?.warn(
      { ip: this.socket.remoteAddress, pending: this.pending.size, waiting: this.waiting.length, reason: 'pipelining_cap' },
      'connection ends after its answers: more pipelined requests than may wait',
    );
  }

  private takeUp(req: IncomingMessage, res: ServerResponse): void {
    this.pending.add(res);
    res.once('close', () => {
      this.pending.delete(res);
      if (!this.closed) this.next();
    });
    this.app(req, res);
  }

  /** An answer left: take up waiting requests while there is room, then read again (or end). */
  private next(): void {
    while (this.pending.size < MAX_PIPELINED_REQUESTS && this.waiting.length) {
      const [req, res] = this.waiting.shift()!;
      this.takeUp(req, res);
    }
    if (this.pending.size >= MAX_PIPELINED_REQUESTS || this.waiting.length) return;
    if (this.ending) {
      if (this.pending.size === 0) this.finish();
      return;
    }
    if (this.holding) {
      this.holding = false;
      this.socket.resume();
    }
  }

  private hold(): void {
    if (this.holding) return;
    this.holding = true;
    this.socket.pause();
  }

  /**
   * Ends the connection after its last answer: the write side is shut (the client reads every
   * answer, then the end), and the socket destroyed if the client has not closed it within `lingerMs`.
   */
  private finish(): void {
    this.socket.end();
    setTimeout(() => this.socket.destroy(), this.lingerMs).unref();
  }
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
