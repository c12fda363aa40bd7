/**
 * Pipelined requests and clients that stop reading (findings 1 and 2 of the second security round):
 *
 * - pipelined `/docs/assets/*` requests then a close leave no descriptor open (they leaked one file
 *   descriptor per queued answer, for good);
 * - a connection carrying more pipelined requests than the cap is answered in full, in order (the
 *   gateway stops reading it while 16 are taken up), and memory stays bounded while clients hold
 *   sockets open without reading;
 * - a connection whose client stops reading is closed after the stalled-write timeout;
 * - every request the gateway took up is logged exactly once, whatever happened to its socket.
 */
import fs from 'node:fs';
import net from 'node:net';
import { randomKeyValue, eventually, sleep, startStack, UNLIMITED, type KeySpec, type Stack } from '../kit/gateway-stack';
import { accessLineOf, ANSWERED, requestIdText, type AccessLine } from '../kit/log-lines';

/** Set short here (default 30 s) so the suite does not wait. */
const STALL_TIMEOUT_MS = 2000;
const KEY: KeySpec = { id: 'pipe', value: randomKeyValue('pipe'), tier: 'standard', countries: ['GB'], address: '127.0.0.1', status: 'active', limits: UNLIMITED };

let stack: Stack;
beforeAll(async () => {
  stack = await startStack({ keys: [KEY], gateways: [{ WRITE_STALL_TIMEOUT_MS: String(STALL_TIMEOUT_MS) }] });
}, 60_000);
afterAll(async () => {
  await stack?.stop();
});

const pid = (): number => stack.gateway.child.pid!;
export const openDescriptors = (p: number): number => fs.readdirSync(`/proc/${p}/fd`).length;
export const rssMb = (p: number): number => Number(/VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${p}/status`, 'utf8'))![1]) / 1024;

async function pollUntil(check: () => boolean, timeoutMs: number): Promise<boolean> {
  return eventually('the condition', check, { timeoutMs, intervalMs: 100 }).catch(() => check());
}

const request = (path: string, id: string): string => `GET ${path} HTTP/1.1\r\nHost: gw\r\nX-Request-Id: ${id}\r\n\r\n`;

interface Held {
  socket: net.Socket;
  /** Resolves when the server (or the test) closed the connection. */
  closed: Promise<void>;
  closedByServer: () => boolean;
  received: () => number;
}

/** One connection carrying `text` in one write; reads nothing unless `read`. */
function hold(text: string, read = false): Held {
  const socket = net.connect(stack.gateway.port, '127.0.0.1');
  let byServer = false;
  let bytes = 0;
  let destroyedByTest = false;
  const closed = new Promise<void>((resolve) => {
    socket.on('close', () => {
      byServer = !destroyedByTest;
      resolve();
    });
  });
  socket.on('error', () => undefined);
  if (read) socket.on('data', (d: Buffer) => (bytes += d.length));
  else socket.pause();
  socket.write(text);
  const destroy = socket.destroy.bind(socket);
  socket.destroy = (err?: Error) => {
    destroyedByTest = true;
    return destroy(err);
  };
  return { socket, closed, closedByServer: () => byServer, received: () => bytes };
}

/** Every "answered" log line of the gateway with this request id. */
const answeredLines = (id: string): string[] => stack.gateway.output.filter((l) => l.includes(ANSWERED) && l.includes(requestIdText(id)));

let batch = 0;
const ids = (n: number): string[] => {
  batch++;
  return Array.from({ length: n }, (_, i) => `pipe-${batch}-${i}`);
};

test('finding 1: pipelined /docs/assets requests then a close leave no descriptor open', async () => {
  // Warm up (first answers load code), then the baseline.
  const warm = hold(request('/docs/assets/swagger-ui.css', 'warm') + request('/v1/openapi.json', 'warm2'), true);
  await eventually('both warm-up answers logged', () => accessLineOf(stack.gateway.output, 'warm') && accessLineOf(stack.gateway.output, 'warm2'));
  warm.socket.destroy();
  await warm.closed;
  await sleep(300);
  const baseline = openDescriptors(pid());

  // One 64 KB write of pipelined requests for the largest asset, then the client goes away.
  const one = request('/docs/assets/swagger-ui-bundle.js', 'b-0000000');
  const big = hold(Array.from({ length: Math.floor(65536 / one.length) }, (_, i) => request('/docs/assets/swagger-ui-bundle.js', `b-${String(i).padStart(7, '0')}`)).join(''));
  await sleep(1500);
  const during = openDescriptors(pid());
  big.socket.destroy();
  // Ten pipelined style-sheet requests, read a little, then closed.
  const css = hold(ids(10).map((id) => request('/docs/assets/swagger-ui.css', id)).join(''));
  await sleep(500);
  css.socket.destroy();
  await Promise.all([big.closed, css.closed]);

  const back = await pollUntil(() => openDescriptors(pid()) <= baseline + 2, 10_000);
  const after = openDescriptors(pid());
  process.stdout.write(`finding 1: descriptors baseline ${baseline}, during ${during}, after the clients left ${after}\n`);
  expect({ back, after }).toEqual({ back: true, after: expect.any(Number) });
  expect(after).toBeLessThanOrEqual(baseline + 2);
}, 30_000);

const warnings = (text: string): number => stack.gateway.output.filter((l) => l.includes(text)).length;

/**
 * A client that reads nothing does not notice its connection was closed (its socket is paused), so
 * the gateway's side is watched: its open descriptors back to `fds`, and the warning logged.
 */
async function cutByGateway(fds: number, warning: string, warningsBefore: number, timeoutMs: number): Promise<boolean> {
  return pollUntil(() => openDescriptors(pid()) <= fds && warnings(warning) > warningsBefore, timeoutMs);
}

/** The X-Request-Id of each answer, in the order the client received them. */
const answerIds = (text: string): string[] => [...text.matchAll(/^X-Request-Id: (\S+)\r$/gim)].map((m) => m[1]!);
const statusCount = (text: string, status: number): number => text.split(`HTTP/1.1 ${status} `).length - 1;

/** One connection that writes `text` at once and reads until `answers` answers are in (or the timeout). */
async function pipelined(text: string, answers: number, timeoutMs: number): Promise<string> {
  const socket = net.connect(stack.gateway.port, '127.0.0.1');
  let received = '';
  socket.setEncoding('latin1');
  socket.on('data', (d: string) => (received += d));
  socket.on('error', () => undefined);
  socket.write(text);
  await pollUntil(() => answerIds(received).length >= answers || socket.destroyed, timeoutMs);
  socket.destroy();
  return received;
}

test('200 pipelined /v1/ping in one write: 200 answers in order, 200 access lines', async () => {
  const list = ids(200);
  const ping = (id: string): string => `GET /v1/ping HTTP/1.1\r\nHost: gw\r\nx-api-key: ${KEY.value}\r\nX-Request-Id: ${id}\r\n\r\n`;
  const text = list.map(ping).join('');
  const received = await pipelined(text, 200, 20_000);
  process.stdout.write(`pipelining: ${answerIds(received).length} answers delivered to a client that wrote 200 /v1/ping in one write\n`);
  expect(answerIds(received)).toEqual(list);
  expect(statusCount(received, 200)).toBe(200);
  await pollUntil(() => list.every((id) => answeredLines(id).length > 0), 5000);
  expect(list.map((id) => answeredLines(id).length)).toEqual(Array(200).fill(1));
}, 30_000);

test('200 pipelined data calls on one connection: every one answered in order and logged once, no connection closed', async () => {
  const before = warnings('connection closed');
  const list = ids(200);
  // Each waits on the data service; the gateway takes up at most 16 at once.
  const text = list.map((id) => `GET /v1/properties?country=GB&limit=1 HTTP/1.1\r\nHost: gw\r\nx-api-key: ${KEY.value}\r\nX-Request-Id: ${id}\r\n\r\n`).join('');
  const received = await pipelined(text, 200, 25_000);
  expect(answerIds(received)).toEqual(list);
  expect(statusCount(received, 200)).toBe(200);
  await pollUntil(() => list.every((id) => answeredLines(id).length > 0), 5000);
  expect(list.map((id) => answeredLines(id).length)).toEqual(Array(200).fill(1));
  expect(warnings('connection closed')).toBe(before);
}, 30_000);

test('finding 2: pipelined /v1/openapi.json on connections that never read cannot pin memory', async () => {
  await sleep(300);
  const fds = openDescriptors(pid());
  const before = rssMb(pid());
  const cuts = (): number => warnings('stalled write');
  const cutsBefore = cuts();
  const conns = [0, 1, 2].map(() => hold(ids(1560).map((id) => request('/v1/openapi.json', id)).join('')));
  await sleep(1500);
  const peak = rssMb(pid());
  // The client holds all three sockets open and reads nothing; the gateway cuts them.
  const cut = await pollUntil(() => openDescriptors(pid()) <= fds && cuts() >= cutsBefore + 3, STALL_TIMEOUT_MS + 10_000);
  const after = rssMb(pid());
  process.stdout.write(`finding 2: RSS before ${before.toFixed(0)} MB, peak with 3 non-reading connections ${peak.toFixed(0)} MB, after the cut ${after.toFixed(0)} MB; cut by the gateway: ${cut}\n`);
  for (const c of conns) c.socket.destroy();
  await Promise.all(conns.map((c) => c.closed));
  expect(cut).toBe(true);
  expect(peak - before).toBeLessThan(100);
}, 30_000);

test('finding 2: a client that stops reading is cut after the stalled-write timeout, and every answer is logged once', async () => {
  await sleep(300);
  const fds = openDescriptors(pid());
  const stalls = warnings('stalled write');
  const list = ids(8);
  // Eight 1.5 MB answers to a client that reads nothing: the socket's buffers fill and stay full.
  const started = Date.now();
  const conn = hold(list.map((id) => request('/docs/assets/swagger-ui-bundle.js', id)).join(''));
  const cut = await cutByGateway(fds, 'stalled write', stalls, STALL_TIMEOUT_MS + 10_000);
  const waited = Date.now() - started;
  conn.socket.destroy();
  await conn.closed;
  expect(cut).toBe(true);
  expect(waited).toBeGreaterThanOrEqual(STALL_TIMEOUT_MS - 200);
  await pollUntil(() => list.every((id) => answeredLines(id).length > 0), 3000);
  expect(list.map((id) => answeredLines(id).length)).toEqual(Array(8).fill(1));
  // Those the kernel's buffers took count as sent (200); the rest never left (499).
  const statuses = list.map((id) => (JSON.parse(answeredLines(id)[0]!) as AccessLine).res.statusCode);
  expect(statuses.filter((s) => s !== 200 && s !== 499)).toEqual([]);
  expect(statuses.filter((s) => s === 499).length).toBeGreaterThan(0);
}, 30_000);

test('answers that never left a connection the client closed are logged once each (status 499)', async () => {
  const list = ids(6);
  const conn = hold(list.map((id) => request('/docs/assets/swagger-ui-bundle.js', id)).join(''));
  await sleep(800);
  conn.socket.destroy();
  await conn.closed;
  const all = await pollUntil(() => list.every((id) => answeredLines(id).length > 0), 5000);
  expect(list.map((id) => answeredLines(id).length)).toEqual(Array(6).fill(1));
  expect(all).toBe(true);
  // The client read nothing: those the kernel's buffers took count as sent (200), the rest never left (499).
  const statuses = list.map((id) => (JSON.parse(answeredLines(id)[0]!) as AccessLine).res.statusCode);
  expect(statuses.filter((s) => s !== 200 && s !== 499)).toEqual([]);
  expect(statuses.filter((s) => s === 499).length).toBeGreaterThan(0);
}, 30_000);

test('the assets are answered from memory with a strong ETag; If-None-Match gets 304', async () => {
  // Uncompressed, to see the asset's own (strong) validator; a compressed form's is weak.
  const first = await fetch(`${stack.url}/docs/assets/swagger-ui.css`, { headers: { 'accept-encoding': 'identity' } });
  const body = await first.text();
  expect(first.status).toBe(200);
  expect(body.length).toBeGreaterThan(1000);
  const etag = first.headers.get('etag');
  expect(etag).toMatch(/^"[A-Za-z0-9_-]+"$/);
  expect(first.headers.get('cache-control')).toBe('public, max-age=86400');
  const again = await fetch(`${stack.url}/docs/assets/swagger-ui.css`, { headers: { 'if-none-match': etag!, 'accept-encoding': 'identity' } });
  expect(again.status).toBe(304);
  expect(await again.text()).toBe('');
  const other = await fetch(`${stack.url}/docs/assets/swagger-ui-bundle.js`, { headers: { 'if-none-match': etag! } });
  expect(other.status).toBe(200);
  expect(other.headers.get('etag')).not.toBe(etag);
  await other.arrayBuffer();
});
