/**
 * Pipelining back-pressure (gateway/connection-guard.ts, pipelined-connection.ts), on the gateway's own HTTP server in
 * process with an app the test answers by hand: at most 16 requests of a connection are taken up at
 * once; while they are, the connection is not read; every request taken up is answered, in order.
 */
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { MAX_PIPELINED_REQUESTS, MAX_WAITING_REQUESTS } from '../../gateway/pipelined-connection';
import { createServer } from '../../gateway/server';

interface Taken {
  url: string;
  res: ServerResponse;
  /** How many `close` events its response emitted. */
  closes: number;
}

let server: http.Server;
let port: number;
/** Requests the app was given, in order, and how many were unanswered at most at one time. */
let taken: Taken[] = [];
let answerAtOnce = true;
let open = 0;
let mostOpen = 0;
/** The gateway side of the test's connection (its bytesRead says what was read from the client). */
let serverSocket: net.Socket | undefined;

beforeAll(async () => {
  server = createServer(
    (req: IncomingMessage, res: ServerResponse) => {
      const t: Taken = { url: req.url ?? '', res, closes: 0 };
      taken.push(t);
      res.on('close', () => t.closes++);
      open++;
      mostOpen = Math.max(mostOpen, open);
      // Before the guard's own listener, which takes up the next request.
      res.prependOnceListener('close', () => open--);
      if (answerAtOnce) setImmediate(() => res.end(`answer ${req.url ?? ''}\n`));
    },
    { writeStallTimeoutMs: 30_000 },
  );
  server.on('connection', (s: net.Socket) => (serverSocket = s));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});
beforeEach(() => {
  taken = [];
  answerAtOnce = true;
  open = 0;
  mostOpen = 0;
});

const request = (i: number): string => `GET /${i} HTTP/1.1\r\nHost: gw\r\n\r\n`;
const pipeline = (from: number, n: number): string => Array.from({ length: n }, (_, i) => request(from + i)).join('');

async function until(check: () => boolean, timeoutMs = 10_000): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (!check() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
  return check();
}

/** A client connection that reads everything; `bodies()` lists the answers' bodies in the order received. */
function client(): { socket: net.Socket; bodies: () => string[]; ended: () => boolean } {
  const socket = net.connect(port, '127.0.0.1');
  let text = '';
  let ended = false;
  socket.setEncoding('latin1');
  socket.on('data', (d: string) => (text += d));
  socket.on('end', () => (ended = true));
  socket.on('error', () => undefined);
  return { socket, bodies: () => [...text.matchAll(/answer (\S+)\n/g)].map((m) => m[1]!), ended: () => ended };
}

test('200 pipelined requests in one write: 200 answers, in order, each request taken up once, never more than 16 at once', async () => {
  const c = client();
  c.socket.write(pipeline(0, 200));
  const all = await until(() => c.bodies().length >= 200);
  c.socket.destroy();
  expect(all).toBe(true);
  expect(c.bodies()).toEqual(Array.from({ length: 200 }, (_, i) => `/${i}`));
  expect(taken.map((t) => t.url)).toEqual(Array.from({ length: 200 }, (_, i) => `/${i}`));
  expect(mostOpen).toBe(MAX_PIPELINED_REQUESTS);
});

test('while 16 requests are taken up and unanswered, the connection is not read; it is read again as answers leave', async () => {
  answerAtOnce = false;
  const c = client();
  c.socket.write(pipeline(0, MAX_PIPELINED_REQUESTS));
  expect(await until(() => taken.length === MAX_PIPELINED_REQUESTS)).toBe(true);
  const readBefore = serverSocket!.bytesRead;
  // Written one by one after the cap is reached: they stay in the kernel, unread by the gateway.
  for (let i = 0; i < 10; i++) {
    c.socket.write(request(100 + i));
    await new Promise((r) => setTimeout(r, 30));
  }
  await new Promise((r) => setTimeout(r, 300));
  expect({ taken: taken.length, read: serverSocket!.bytesRead }).toEqual({ taken: MAX_PIPELINED_REQUESTS, read: readBefore });

  // One answer leaves: one more request is taken up (the other nine wait, read but not taken up).
  taken[0]!.res.end('answer /0\n');
  expect(await until(() => taken.length === MAX_PIPELINED_REQUESTS + 1)).toBe(true);
  expect(serverSocket!.bytesRead).toBeGreaterThan(readBefore);
  await new Promise((r) => setTimeout(r, 200));
  expect(taken.length).toBe(MAX_PIPELINED_REQUESTS + 1);

  // Every answer leaves: everything is taken up and answered in request order.
  for (let i = 1; i < 26; i++) {
    expect(await until(() => taken.length > i)).toBe(true);
    taken[i]!.res.end(`answer ${taken[i]!.url}\n`);
  }
  const expected = [...Array.from({ length: 16 }, (_, i) => `/${i}`), ...Array.from({ length: 10 }, (_, i) => `/${100 + i}`)];
  expect(await until(() => c.bodies().length === 26)).toBe(true);
  expect(c.bodies()).toEqual(expected);
  c.socket.destroy();
});

test('more requests in one read than may wait: those taken up or waiting are answered, the rest not taken up, then the connection ends', async () => {
  const c = client();
  const most = MAX_PIPELINED_REQUESTS + MAX_WAITING_REQUESTS;
  // Small enough to arrive in one read (64 KiB).
  const text = pipeline(0, most + 300);
  expect(text.length).toBeLessThan(65_536);
  c.socket.write(text);
  expect(await until(() => c.ended())).toBe(true);
  expect(c.bodies()).toEqual(Array.from({ length: most }, (_, i) => `/${i}`));
  expect(taken.length).toBe(most);
  c.socket.destroy();
});

test('a client that closes while requests wait: each request taken up closes once, those waiting are not all taken up', async () => {
  answerAtOnce = false;
  const c = client();
  c.socket.write(pipeline(0, 40));
  expect(await until(() => taken.length === MAX_PIPELINED_REQUESTS)).toBe(true);
  const gatewaySide = serverSocket!;
  let gone = false;
  gatewaySide.once('close', () => (gone = true));
  c.socket.destroy();
  // The connection is not read while held, so the gateway learns of the close when it writes.
  for (let i = 0; !gone && i < taken.length; i++) {
    taken[i]!.res.end(`answer ${taken[i]!.url}\n`);
    await until(() => gone || taken.length > i + 1, 1000);
  }
  expect(await until(() => gone && open === 0)).toBe(true);
  await new Promise((r) => setTimeout(r, 200));
  expect(taken.map((t) => t.closes)).toEqual(Array(taken.length).fill(1));
  expect(taken.length).toBeLessThan(40);
});
