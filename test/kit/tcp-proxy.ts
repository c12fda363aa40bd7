/**
 * A small TCP proxy on a free loopback port, put between a process under test and a server it
 * depends on (Redis, a data service), whose behaviour is switched at run time:
 *
 *   pass       forward both ways at once
 *   delay      forward both ways, each chunk `ms` after it arrived (order kept): a slow server or link
 *   blackhole  accept and hold: nothing is forwarded or answered, new connections are accepted and
 *              held too (a frozen server, a stalled path). Leaving it for `pass`/`delay` delivers what
 *              was held, in order (as a thawed server or a healed TCP path would); `reset()` drops it.
 *   reset      every open connection is reset (RST, both sides) and every new one is reset at once
 *
 *   cutOn      (with `resp`; any mode) every connection that has sent, or sends, a given command
 *              (e.g. SUBSCRIBE) is reset at once: one role of a client (its subscriber connection)
 *              is cut while its other connections pass
 *
 * It counts connections, and can decode the client → server stream as RESP commands (Redis), so a
 * test can see how many commands a client issued, and which, without touching the client.
 */
import net, { type AddressInfo, type Socket } from 'node:net';

export type ProxyMode = 'pass' | 'delay' | 'blackhole' | 'reset';

export interface TcpProxyOptions {
  /** Decode what clients send as RESP commands (see `commands`). */
  readonly resp?: boolean;
}

/** One RESP command a client sent through the proxy. */
export interface RespCommand {
  readonly at: number;
  /** The client's connection number (1, 2, …) and local port: one gateway Redis client each. */
  readonly connection: number;
  readonly clientPort: number;
  readonly args: readonly string[];
}

export interface TcpProxy {
  readonly port: number;
  /** `host:port` of the proxy, e.g. for a `redis://` URL. */
  readonly address: string;
  readonly mode: ProxyMode;
  pass(): void;
  delay(ms: number): void;
  blackhole(): void;
  reset(): void;
  /** Resets every connection that has sent `command` (case-insensitive) and every one that sends it from now on; undefined: stop. */
  cutOn(command: string | undefined): void;
  /** Connections reset by `cutOn` so far. */
  readonly cut: number;
  /** Connections open now. */
  openConnections(): number;
  /** Connections accepted since the start. */
  readonly accepted: number;
  /** Client → server commands (with `resp`), in arrival order. */
  readonly commands: RespCommand[];
  close(): Promise<void>;
}

/** An incremental RESP decoder of client commands: arrays of bulk strings (what every client library sends). */
function respDecoder(onCommand: (args: string[]) => void): (chunk: Buffer) => void {
  let buffered: Buffer = Buffer.alloc(0);
  const line = (from: number): { text: string; next: number } | undefined => {
    const end = buffered.indexOf('\r\n', from);
    return end < 0 ? undefined : { text: buffered.toString('latin1', from, end), next: end + 2 };
  };
  return (chunk) => {
    buffered = buffered.length ? Buffer.concat([buffered, chunk]) : chunk;
    for (;;) {
      const head = line(0);
      if (!head) return;
      if (head.text[0] !== '*') {
        // An inline command (e.g. a bare PING): one line.
        onCommand(head.text.split(' '));
        buffered = buffered.subarray(head.next);
        continue;
      }
      const count = Number(head.text.slice(1));
      const args: string[] = [];
      let at = head.next;
      for (let i = 0; i < count; i++) {
        const size = line(at);
        if (!size) return;
        const length = Number(size.text.slice(1));
        if (buffered.length < size.next + length + 2) return;
        args.push(buffered.toString('utf8', size.next, size.next + length));
        at = size.next + length + 2;
      }
      onCommand(args);
      buffered = buffered.subarray(at);
    }
  };
}

/** One direction of one connection: chunks waiting to be written, released by the mode. */
class Pipe {
  private readonly queue: Array<{ chunk: Buffer; at: number }> = [];
  private timer: NodeJS.Timeout | undefined;
  private ended = false;
  destination: Socket | undefined;

  constructor(private readonly state: { mode: ProxyMode; delayMs: number }) {}

  push(chunk: Buffer): void {
    this.queue.push({ chunk, at: Date.now() });
    this.pump();
  }

  end(): void {
    this.ended = true;
    this.pump();
  }

  pump(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    const destination = this.destination;
    if (!destination || destination.destroyed || this.state.mode === 'blackhole' || this.state.mode === 'reset') return;
    while (this.queue.length) {
      const due = this.queue[0]!.at + (this.state.mode === 'delay' ? this.state.delayMs : 0);
      const wait = due - Date.now();
      if (wait > 0) {
        this.timer = setTimeout(() => this.pump(), wait);
        return;
      }
      destination.write(this.queue.shift()!.chunk);
    }
    if (this.ended) destination.end();
  }

  stop(): void {
    clearTimeout(this.timer);
    this.queue.length = 0;
  }
}

interface Connection {
  readonly client: Socket;
  server: Socket | undefined;
  readonly up: Pipe;
  readonly down: Pipe;
  connectServer(): void;
  destroy(reset: boolean): void;
}

/** Starts a proxy on 127.0.0.1 (free port) to `target` (`host:port`, or a port on 127.0.0.1). */
export async function startTcpProxy(target: string | number, options: TcpProxyOptions = {}): Promise<TcpProxy> {
  const [targetHost, targetPort] = typeof target === 'number' ? ['127.0.0.1', target] : [target.slice(0, target.lastIndexOf(':')), Number(target.slice(target.lastIndexOf(':') + 1))];
  const state = { mode: 'pass' as ProxyMode, delayMs: 0 };
  const connections = new Set<Connection>();
  const commands: RespCommand[] = [];
  let accepted = 0;
  let cutCommand: string | undefined;
  let cut = 0;
  /** Command names each open connection has sent (with `resp`). */
  const sent = new Map<Connection, Set<string>>();
  const cutIf = (c: Connection): void => {
    if (cutCommand && sent.get(c)?.has(cutCommand) && connections.has(c)) {
      cut++;
      c.destroy(true);
    }
  };

  const server = net.createServer({ pauseOnConnect: false }, (client) => {
    accepted++;
    const number = accepted;
    if (state.mode === 'reset') {
      client.on('error', () => undefined);
      client.resetAndDestroy();
      return;
    }
    const up = new Pipe(state);
    const down = new Pipe(state);
    up.destination = undefined;
    down.destination = client;
    const decode = options.resp
      ? respDecoder((args) => {
          commands.push({ at: Date.now(), connection: number, clientPort: client.remotePort ?? 0, args });
          const names = sent.get(connection) ?? new Set<string>();
          names.add((args[0] ?? '').toLowerCase());
          sent.set(connection, names);
          cutIf(connection);
        })
      : undefined;
    const connection: Connection = {
      client,
      server: undefined,
      up,
      down,
      connectServer() {
        if (connection.server || client.destroyed) return;
        const s = net.connect({ host: targetHost, port: targetPort });
        connection.server = s;
        s.on('connect', () => {
          up.destination = s;
          up.pump();
        });
        s.on('data', (chunk: Buffer) => down.push(chunk));
        s.on('end', () => down.end());
        s.on('error', () => connection.destroy(false));
        s.on('close', () => connection.destroy(false));
      },
      destroy(reset) {
        sent.delete(connection);
        if (!connections.delete(connection)) return;
        up.stop();
        down.stop();
        for (const socket of [client, connection.server]) {
          if (!socket || socket.destroyed) continue;
          if (reset) socket.resetAndDestroy();
          else socket.destroy();
        }
      },
    };
    connections.add(connection);
    client.on('data', (chunk: Buffer) => {
      decode?.(chunk);
      if (connections.has(connection)) up.push(chunk);
    });
    client.on('end', () => up.end());
    client.on('error', () => connection.destroy(false));
    client.on('close', () => connection.destroy(false));
    // A held connection reaches the server only when the blackhole lifts.
    if (state.mode !== 'blackhole') connection.connectServer();
  });
  server.on('error', () => undefined);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  const release = (): void => {
    for (const c of connections) {
      c.connectServer();
      c.up.pump();
      c.down.pump();
    }
  };

  return {
    port,
    address: `127.0.0.1:${port}`,
    get mode() {
      return state.mode;
    },
    pass() {
      state.mode = 'pass';
      release();
    },
    delay(ms: number) {
      state.mode = 'delay';
      state.delayMs = ms;
      release();
    },
    blackhole() {
      state.mode = 'blackhole';
    },
    reset() {
      state.mode = 'reset';
      for (const c of [...connections]) c.destroy(true);
    },
    cutOn(command: string | undefined) {
      cutCommand = command?.toLowerCase();
      for (const c of [...connections]) cutIf(c);
    },
    get cut() {
      return cut;
    },
    openConnections: () => connections.size,
    get accepted() {
      return accepted;
    },
    commands,
    close() {
      for (const c of [...connections]) c.destroy(false);
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
