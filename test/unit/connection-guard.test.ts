/**
 * The connection guard's stalled-write sweep looks only at connections with something in flight: an
 * idle keep-alive connection leaves it after one sweep (idle connections cost the sweep nothing),
 * comes back with its next request, and a connection idle for longer than the stall timeout is not
 * mistaken for a stalled one when it asks again. A client that stops reading is still cut.
 */
import http from 'node:http';
import net from 'node:net';
import { guardConnections } from '../../gateway/connection-guard';

const STALL_MS = 1000;
// More than loopback's socket buffers take (a few MB each way), so bytes wait in the process.
const BIG = 'x'.repeat(32 * 1024 * 1024);
let guard: ReturnType<typeof guardConnections>;
let server: http.Server;
let port: number;

beforeAll(async () => {
  guard = guardConnections((req, res) => {
    res.setHeader('content-type', 'text/plain');
    res.end(req.url === '/big' ? BIG : 'ok');
  }, { writeStallTimeoutMs: STALL_MS });
  server = http.createServer({ keepAliveTimeout: 60_000 }, guard.listener);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as net.AddressInfo).port;
});
afterAll(async () => {
  guard.stop();
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const request = (path: string): string => `GET ${path} HTTP/1.1\r\nhost: test\r\n\r\n`;

/** A keep-alive socket that has made one request and read its answer. */
async function idleSocket(): Promise<net.Socket> {
  const socket = net.connect(port, '127.0.0.1');
  await new Promise((resolve) => socket.once('connect', resolve));
  await ask(socket, '/');
  return socket;
}

function ask(socket: net.Socket, path: string): Promise<string> {
  return new Promise((resolve) => {
    let text = '';
    const onData = (chunk: Buffer): void => {
      text += chunk.toString('latin1');
      if (/\r\n\r\nok$/.test(text)) {
        socket.off('data', onData);
        resolve(text);
      }
    };
    socket.on('data', onData);
    socket.write(request(path));
  });
}

async function until(what: string, check: () => boolean, ms = 3000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error(`not within ${ms} ms: ${what}`);
    await sleep(20);
  }
}

test('idle keep-alive connections leave the sweep; a request brings one back; idle past the stall timeout is not a stall', async () => {
  const sockets = await Promise.all(Array.from({ length: 50 }, idleSocket));
  await until('50 connections watched', () => guard.watched().connections === 50);
  await until('none swept once idle', () => guard.watched().swept === 0);

  await sleep(STALL_MS + 600); // idle for longer than the stall timeout
  const answer = await ask(sockets[0]!, '/');
  expect(answer).toMatch(/^HTTP\/1.1 200/);
  expect(guard.watched().swept).toBe(1);
  await sleep(STALL_MS + 600);
  expect(sockets[0]!.destroyed).toBe(false); // answered and read: never cut
  expect(guard.watched().swept).toBe(0);
  for (const s of sockets) s.destroy();
  await until('closed connections forgotten', () => guard.watched().connections === 0);
});

test('a client that asks for a large answer and stops reading is still cut', async () => {
  const socket = await idleSocket();
  await sleep(700); // left the sweep
  socket.pause();
  socket.write(request('/big'));
  await until('back in the sweep', () => guard.watched().swept === 1, 1000);
  // The server's side closes (the client, paused, would not read the end).
  await until('cut', () => guard.watched().connections === 0 && guard.watched().swept === 0, STALL_MS * 5);
  socket.destroy();
});
