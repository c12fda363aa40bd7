/**
 * Loopback network helpers in the test process: stub HTTP servers, ports that refuse connections,
 * and whether IPv6 loopback works on this host.
 */
import { execFileSync } from 'node:child_process';
import http, { type IncomingHttpHeaders } from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { send } from './http-send';

export interface StubRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  rawHeaders: string[];
}

export interface Stub {
  url: string;
  port: number;
  requests: StubRequest[];
  close(): Promise<void>;
}

/** A node:http server on 127.0.0.1:0 answering with `handler` (which may never answer). */
export async function startStub(handler: (req: http.IncomingMessage, res: http.ServerResponse) => void): Promise<Stub> {
  const requests: StubRequest[] = [];
  const server = http.createServer((req, res) => {
    requests.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, rawHeaders: req.rawHeaders });
    req.resume();
    handler(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A TCP port that was free a moment ago and has nothing listening on it now. */
export async function closedPort(): Promise<number> {
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/**
 * A port on 127.0.0.1 where connections are refused: a privileged port nothing listens on (no test
 * process can bind it, so no race with parallel suites), else a port that was free a moment ago.
 */
export async function refusedPort(): Promise<number> {
  for (const port of [1, 9, 47]) {
    const refused = await new Promise<boolean>((resolve) => {
      const socket = net.connect({ host: '127.0.0.1', port });
      socket.once('connect', () => {
        socket.destroy();
        resolve(false);
      });
      socket.once('error', (err: NodeJS.ErrnoException) => resolve(err.code === 'ECONNREFUSED'));
    });
    if (refused) return port;
  }
  return closedPort();
}

/** True when this host can bind and connect over IPv6 loopback. */
export async function ipv6LoopbackWorks(): Promise<boolean> {
  const server = http.createServer((_req, res) => res.end('ok'));
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '::1', resolve);
    });
    const { port } = server.address() as AddressInfo;
    const a = await send(`http://127.0.0.1:${port}`, '/', { host: '::1', timeoutMs: 2000 });
    return a.text === 'ok';
  } catch {
    return false;
  } finally {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

/** A child process that listens on ::1, connects to itself and reads "ok": exit 0 when IPv6 loopback works. */
const IPV6_PROBE = `
const net = require('node:net');
const fail = () => process.exit(1);
setTimeout(fail, 5000);
const server = net.createServer((c) => c.end('ok')).on('error', fail);
server.listen(0, '::1', () => {
  let text = '';
  net.connect(server.address().port, '::1').on('data', (d) => (text += d)).on('end', () => process.exit(text === 'ok' ? 0 : 1)).on('error', fail);
});`;

let ipv6Probed: boolean | undefined;

/**
 * The same question as `ipv6LoopbackWorks`, answered synchronously (a child process), so a suite can
 * choose at collection time between running its IPv6 tests and reporting them skipped.
 */
export function ipv6LoopbackWorksNow(): boolean {
  if (ipv6Probed === undefined) {
    try {
      execFileSync(process.execPath, ['-e', IPV6_PROBE], { stdio: 'ignore', timeout: 20_000 });
      ipv6Probed = true;
    } catch {
      ipv6Probed = false;
    }
  }
  return ipv6Probed;
}

/** `test` where IPv6 loopback works, else `test.skip`: the report says skipped, never passed. */
export function testWithIpv6(): jest.It {
  return ipv6LoopbackWorksNow() ? test : test.skip;
}
