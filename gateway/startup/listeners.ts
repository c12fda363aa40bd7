/**
 * The listeners: one helper that binds a server and says so in one line (or stops start-up with
 * one line when the port cannot be had), and the table of optional listeners, each started only
 * when its port is set. A listener started here is in the list the shutdown drains.
 */
import type { RequestListener, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import { createServer } from '../server';
import { exitAfterFlush } from './shutdown';

export interface ListenOptions {
  /** More fields for the "listening" line. */
  readonly fields?: object;
  /** Run before exiting when the port cannot be had (e.g. stop the workers). */
  readonly beforeExit?: () => Promise<unknown>;
}

/** Binds `server`; the line `message` gives the port and host; a bind error exits 1 with one line. */
export function listen(server: Server, port: number, host: string, logger: Logger, message: string, options: ListenOptions = {}): void {
  server.listen(port, host, () => {
    const address = server.address() as AddressInfo;
    logger.info({ ...options.fields, port: address.port, host: address.address }, message);
  });
  server.on('error', (err) => {
    logger.fatal({ err }, `cannot listen (${message})`);
    void (options.beforeExit?.() ?? Promise.resolve()).finally(() => exitAfterFlush(logger, 1));
  });
}

/** A listener the configuration may ask for: started when `port` is set, drained on shutdown. */
export interface OptionalListener {
  /** The line said once it listens, e.g. "admin api listening". */
  readonly message: string;
  readonly port: number | undefined;
  readonly host: string;
  /** Built only when the listener is started. */
  readonly app: () => RequestListener;
}

/** Starts each listener whose port is set; returns their servers (for the shutdown). */
export function startOptionalListeners(listeners: readonly OptionalListener[], logger: Logger): Server[] {
  const servers: Server[] = [];
  for (const listener of listeners) {
    if (listener.port === undefined) continue;
    const server = createServer(listener.app());
    listen(server, listener.port, listener.host, logger, listener.message);
    servers.push(server);
  }
  return servers;
}
