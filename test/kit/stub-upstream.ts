/**
 * A stub of the listings data service (its internal API, `GET /internal/v1/listings` and
 * `GET /internal/v1/listings/{CC}/{id}`) in the test process, for the reliability and security
 * suites. It records every request (path, query pairs, headers, and whether the gateway gave up on
 * it), counts the answers it completed and the TCP connections it holds, and misbehaves on demand:
 *
 *   ok               a valid page (three listings, `next_after` "pos-3") or the listing asked for
 *   slow             as ok, after `slowMs`
 *   hang             never answers
 *   reset            resets the connection before any answer
 *   reset-mid-body   sends the headers and part of a valid body, then resets
 *   500-stack        500 with a stack trace naming an internal host and path
 *   non-json         200 `text/html` that is not JSON
 *
 * `stopListening()` makes the port refuse connections (the service is down); `listenAgain()` brings
 * it back on the same port.
 */
import http, { type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { eventually } from './timing';

export type UpstreamMode = 'ok' | 'slow' | 'hang' | 'reset' | 'reset-mid-body' | '500-stack' | 'non-json';

export interface UpstreamRequest {
  readonly method: string;
  readonly url: string;
  readonly path: string;
  /** The query as name/value pairs, in order, percent-decoded. */
  readonly query: ReadonlyArray<readonly [string, string]>;
  readonly headers: IncomingHttpHeaders;
  readonly rawHeaders: readonly string[];
  /** Set when the connection closed before the stub finished answering (the gateway gave up). */
  aborted: boolean;
  /** Set when the stub finished writing its answer. */
  answered: boolean;
}

export interface StubUpstream {
  readonly url: string;
  readonly port: number;
  mode: UpstreamMode;
  /** Delay of `slow`, ms. */
  slowMs: number;
  readonly requests: UpstreamRequest[];
  /** Answers with a 2xx status the stub completed. */
  readonly answered2xx: number;
  /** TCP connections open now, and accepted since the start. */
  openSockets(): number;
  readonly acceptedSockets: number;
  /** The request carrying this `x-request-id` (the gateway forwards the caller's). */
  byRequestId(id: string): UpstreamRequest[];
  /** Resolves once `predicate()` holds (polled), or rejects after `timeoutMs`. */
  waitFor(predicate: () => boolean, timeoutMs?: number, what?: string): Promise<void>;
  stopListening(): Promise<void>;
  listenAgain(): Promise<void>;
  close(): Promise<void>;
}

/** Text that must never reach a caller: it names internal hosts, paths and ports. */
export const UPSTREAM_SECRET_MARKERS = ['db-secret-host.internal', '/srv/listings/secret', '10.9.8.7', 'SECRET_UPSTREAM'];

const STACK_TRACE = [
  'Error: connect ECONNREFUSED 10.9.8.7:5432 (db-secret-host.internal)',
  '    at TCPConnectWrap.afterConnect [as oncomplete] (node:net:1595:16)',
  '    at Object.query (/srv/listings/secret/db.js:42:7) SECRET_UPSTREAM',
].join('\n');

const listing = (id: string, country: string): Record<string, unknown> => ({
  id,
  country,
  listing_type: 'sale',
  property_type: 'house',
  price: 100_000,
  title: 'Stub listing',
});

function validAnswer(path: string, query: URLSearchParams): { status: number; body: unknown } {
  const item = /^\/internal\/v1\/listings\/([^/]+)\/([^/]+)$/.exec(path);
  if (item) return { status: 200, body: { item: listing(decodeURIComponent(item[2]!), item[1]!) } };
  const country = query.get('country') ?? 'GB';
  return { status: 200, body: { items: [listing('stub-1', country), listing('stub-2', country), listing('stub-3', country)], next_after: 'pos-3' } };
}

export async function startStubUpstream(): Promise<StubUpstream> {
  const requests: UpstreamRequest[] = [];
  const sockets = new Set<Socket>();
  let acceptedSockets = 0;
  let answered2xx = 0;
  let port = 0;

  const handle = (req: IncomingMessage, res: ServerResponse): void => {
    const url = req.url ?? '/';
    const mark = url.indexOf('?');
    const path = mark < 0 ? url : url.slice(0, mark);
    const params = new URLSearchParams(mark < 0 ? '' : url.slice(mark + 1));
    const record: UpstreamRequest = {
      method: req.method ?? '',
      url,
      path,
      query: [...params],
      headers: req.headers,
      rawHeaders: req.rawHeaders,
      aborted: false,
      answered: false,
    };
    requests.push(record);
    res.on('close', () => {
      if (res.writableFinished) return;
      record.aborted = true;
      // The gateway has closed its side; a real server would find out on its next write. Close ours,
      // so the connection count shows the gateway's connections, not half-closed leftovers.
      req.socket.destroy();
    });
    res.on('finish', () => {
      record.answered = true;
      if (res.statusCode >= 200 && res.statusCode < 300) answered2xx++;
    });
    req.resume();

    const json = (status: number, body: unknown): void => {
      const text = JSON.stringify(body);
      res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
      res.end(text);
    };
    switch (stub.mode) {
      case 'ok': {
        const a = validAnswer(path, params);
        return json(a.status, a.body);
      }
      case 'slow': {
        const timer = setTimeout(() => {
          const a = validAnswer(path, params);
          json(a.status, a.body);
        }, stub.slowMs);
        res.on('close', () => clearTimeout(timer));
        return;
      }
      case 'hang':
        return;
      case 'reset':
        req.socket.resetAndDestroy();
        return;
      case 'reset-mid-body': {
        const text = JSON.stringify(validAnswer(path, params).body);
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
        res.write(text.slice(0, Math.floor(text.length / 2)));
        setTimeout(() => req.socket.resetAndDestroy(), 20);
        return;
      }
      case '500-stack':
        res.writeHead(500, { 'content-type': 'text/plain', server: 'secret-internal-listings/1.0 (db-secret-host.internal)' });
        res.end(STACK_TRACE);
        return;
      case 'non-json':
        res.writeHead(200, { 'content-type': 'text/html' });
        res.end(`<html><body>SECRET_UPSTREAM maintenance page at db-secret-host.internal:${port}</body></html>`);
        return;
    }
  };

  let server: http.Server;
  const listen = async (onPort: number): Promise<void> => {
    server = http.createServer({ keepAliveTimeout: 65_000 }, handle);
    server.on('connection', (socket: Socket) => {
      acceptedSockets++;
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(onPort, '127.0.0.1', () => resolve());
    });
    port = (server.address() as AddressInfo).port;
  };
  const shut = (): Promise<void> =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      for (const s of sockets) s.destroy();
      server.close(() => resolve());
    });
  await listen(0);

  const stub: StubUpstream = {
    get url() {
      return `http://127.0.0.1:${port}`;
    },
    get port() {
      return port;
    },
    mode: 'ok',
    slowMs: 0,
    requests,
    get answered2xx() {
      return answered2xx;
    },
    openSockets: () => sockets.size,
    get acceptedSockets() {
      return acceptedSockets;
    },
    byRequestId: (id) => requests.filter((r) => r.headers['x-request-id'] === id),
    async waitFor(predicate, timeoutMs = 5000, what = 'condition') {
      await eventually(`stub upstream: ${what}`, predicate, { timeoutMs, intervalMs: 20 });
    },
    stopListening: shut,
    listenAgain: () => listen(port),
    close: shut,
  };
  return stub;
}
