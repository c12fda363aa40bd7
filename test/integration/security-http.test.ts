/**
 * HTTP framing attacks over raw sockets, against a gateway in front of a stub data service that
 * records what reaches it:
 *
 * - request smuggling (CL+TE, TE+CL, two Content-Lengths, obfuscated Transfer-Encoding, and other
 *   malformed heads): one JSON 400 and the connection closed; the request hidden in the body is never
 *   answered and never reaches the data service;
 * - slowloris (hundreds of connections that never finish their head): never answered with a
 *   success, dropped, while legitimate requests keep being answered promptly.
 */
import net from 'node:net';
import {
  UNLIMITED,
  expectKeyedSuccess,
  randomKeyValue,
  send,
  sleep,
  startStack,
  type KeySpec,
  type Stack,
} from '../kit/gateway-stack';
import { startStubUpstream, type StubUpstream } from '../kit/stub-upstream';

/** gateway/server.ts: a request head not complete within this time is dropped. */
const HEADERS_TIMEOUT_MS = 10_000;
const KEY: KeySpec = {
  id: 'http',
  value: randomKeyValue('http'),
  tier: 'standard',
  countries: ['GB'],
  address: '127.0.0.1',
  status: 'active',
  limits: UNLIMITED,
};

let stub: StubUpstream;
let stack: Stack;

beforeAll(async () => {
  stub = await startStubUpstream();
  stack = await startStack({ keys: [KEY], backendUrl: stub.url });
});
afterAll(async () => {
  await stack?.stop();
  await stub?.close();
});

interface Exchange {
  /** Everything the server sent. */
  text: string;
  /** The server closed the connection (rather than the test's timeout). */
  closed: boolean;
}

/** Writes `request` on a fresh socket and collects what comes back until the server closes, or `waitMs`. */
function exchange(request: string, waitMs = 1500): Promise<Exchange> {
  return new Promise((resolve) => {
    const socket = net.connect(stack.gateway.port, '127.0.0.1');
    let text = '';
    const timer = setTimeout(() => {
      socket.destroy();
      resolve({ text, closed: false });
    }, waitMs);
    socket.on('data', (d: Buffer) => {
      text += d.toString('latin1');
    });
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearTimeout(timer);
      resolve({ text, closed: true });
    });
    socket.write(request);
  });
}

const responses = (text: string): string[] => text.match(/HTTP\/1\.[01] \d{3}[^\r\n]*/g) ?? [];

let smuggled = 0;
/** A request that, if it were ever parsed on its own, would reach the data service under this id. */
function hidden(): { id: string; text: string } {
  const id = `smuggled-${++smuggled}`;
  return { id, text: `GET /v1/properties?country=GB HTTP/1.1\r\nHost: x\r\nx-api-key: ${KEY.value}\r\nx-request-id: ${id}\r\n\r\n` };
}

const head = (lines: string[]): string => `GET /v1/ping HTTP/1.1\r\nHost: x\r\nx-api-key: ${KEY.value}\r\n${lines.map((l) => `${l}\r\n`).join('')}\r\n`;

describe('request smuggling', () => {
  const CASES: Array<[string, (inner: string) => string]> = [
    ['CL + TE', (inner) => head([`Content-Length: ${5 + inner.length}`, 'Transfer-Encoding: chunked']) + `0\r\n\r\n${inner}`],
    ['TE + CL', (inner) => head(['Transfer-Encoding: chunked', `Content-Length: ${5 + inner.length}`]) + `0\r\n\r\n${inner}`],
    ['CL + TE on a POST', (inner) => head([`Content-Length: ${5 + inner.length}`, 'Transfer-Encoding: chunked']).replace('GET ', 'POST ') + `0\r\n\r\n${inner}`],
    ['two different Content-Lengths', (inner) => head(['Content-Length: 0', `Content-Length: ${inner.length}`]) + inner],
    ['two different Content-Lengths, the long one first', (inner) => head([`Content-Length: ${inner.length}`, 'Content-Length: 0']) + inner],
    ['a Content-Length list', (inner) => head([`Content-Length: 0, ${inner.length}`]) + inner],
    ['Content-Length with a sign', (inner) => head([`Content-Length: +${inner.length}`]) + inner],
    ['Content-Length in hex', (inner) => head([`Content-Length: 0x${inner.length.toString(16)}`]) + inner],
    ['a space before the colon of Transfer-Encoding', (inner) => head([`Content-Length: ${5 + inner.length}`, 'Transfer-Encoding : chunked']) + `0\r\n\r\n${inner}`],
    ['Transfer-Encoding: xchunked with a Content-Length', (inner) => head([`Content-Length: ${inner.length}`, 'Transfer-Encoding: xchunked']) + inner],
    ['Transfer-Encoding: chunked, identity', (inner) => head(['Transfer-Encoding: chunked, identity']) + `0\r\n\r\n${inner}`],
    ['two Transfer-Encoding headers', (inner) => head(['Transfer-Encoding: chunked', 'Transfer-Encoding: identity', `Content-Length: ${inner.length}`]) + `0\r\n\r\n${inner}`],
    ['Transfer-Encoding folded onto a second line', (inner) => head([`Content-Length: ${inner.length}`, 'Transfer-Encoding:', ' chunked']) + `0\r\n\r\n${inner}`],
    ['a bad chunk size', (inner) => head(['Transfer-Encoding: chunked']) + `zz\r\n${inner}\r\n0\r\n\r\n`],
    ['a chunk size with an extension smuggling a request', (inner) => head(['Transfer-Encoding: chunked']) + `0;x=${inner.replace(/\r\n/g, '')}\r\n\r\n`],
    ['bare LF line endings', (inner) => `GET /v1/ping HTTP/1.1\nHost: x\nContent-Length: ${inner.length}\nTransfer-Encoding: chunked\n\n0\n\n${inner}`],
    ['a NUL in a header value', (inner) => head([`Content-Length: ${inner.length}`, 'X-Evil: a\u0000b']) + inner],
    ['HTTP/1.0 with chunked', (inner) => head(['Transfer-Encoding: chunked', `Content-Length: ${inner.length}`]).replace('HTTP/1.1', 'HTTP/1.0') + `0\r\n\r\n${inner}`],
  ];

  test.each(CASES)('%s: one 400 invalid_parameter (JSON), connection closed, the hidden request never served', async (_label, build) => {
    const inner = hidden();
    const { text, closed } = await exchange(build(inner.text));
    expect(responses(text)).toEqual(['HTTP/1.1 400 Bad Request']);
    expect(text).toMatch(/\r\nContent-Type: application\/json/i);
    expect(JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4))).toEqual({ error: 'invalid_parameter', message: expect.any(String), parameter: 'request' });
    expect(closed).toBe(true);
    await sleep(50);
    expect(stub.byRequestId(inner.id)).toEqual([]);
  });

  test('a well-formed GET with a body and a request pipelined behind it: both answered in order, nothing hidden', async () => {
    const inner = hidden();
    const { text } = await exchange(head(['Content-Length: 4']) + 'abcd' + inner.text);
    expect(responses(text)).toEqual(['HTTP/1.1 200 OK', 'HTTP/1.1 200 OK']);
    expect(stub.byRequestId(inner.id)).toHaveLength(1); // the second request was a real one, parsed on its own
  });

  test('legitimate requests are unaffected', async () => {
    expectKeyedSuccess(await send(stack.url, '/v1/properties?country=GB', { headers: { 'x-api-key': KEY.value } }));
  });
});

describe('slowloris', () => {
  const SLOW = 200;
  const closedAfter: number[] = [];

  test(`${SLOW} connections that never finish their head: never answered with a success, dropped; legitimate requests answered throughout`, async () => {
    const baseline: number[] = [];
    for (let i = 0; i < 10; i++) {
      const started = Date.now();
      expectKeyedSuccess(await send(stack.url, '/v1/ping', { headers: { 'x-api-key': KEY.value } }));
      baseline.push(Date.now() - started);
    }

    const started = Date.now();
    const slow = Array.from({ length: SLOW }, (_, i) => {
      const socket = net.connect(stack.gateway.port, '127.0.0.1');
      let received = '';
      let drip: NodeJS.Timeout | undefined;
      const closed = new Promise<{ ms: number; received: string }>((resolve) => {
        socket.on('data', (d: Buffer) => {
          received += d.toString('latin1');
        });
        socket.on('error', () => undefined);
        socket.on('close', () => {
          clearInterval(drip);
          resolve({ ms: Date.now() - started, received });
        });
      });
      socket.on('connect', () => {
        // Half of them send a partial request line, half a full line and then one header byte a second.
        socket.write(i % 2 ? 'GET /v1/ping HTTP/1.1\r\nHost: x\r\nx-api-key: ' : 'GET /v1/properties?coun');
        drip = setInterval(() => socket.write('a'), 1000);
      });
      return closed;
    });

    // Legitimate requests keep being answered while the slow connections are held.
    const during: number[] = [];
    while (Date.now() - started < HEADERS_TIMEOUT_MS + 2000) {
      const t = Date.now();
      expectKeyedSuccess(await send(stack.url, '/v1/ping', { headers: { 'x-api-key': KEY.value }, timeoutMs: 5000 }));
      during.push(Date.now() - t);
      await sleep(100);
    }
    const results = await Promise.all(slow);
    closedAfter.push(...results.map((r) => r.ms));
    const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    process.stdout.write(
      `slowloris: ${SLOW} slow connections dropped after ${Math.min(...closedAfter)}-${Math.max(...closedAfter)} ms; ` +
        `legitimate ping median ${median(baseline)} ms before, ${median(during)} ms during (max ${Math.max(...during)} ms, ${during.length} requests)\n`,
    );

    for (const r of results) expect(r.received).not.toMatch(/HTTP\/1\.1 2\d\d/);
    expect(Math.max(...during)).toBeLessThan(1500);
    // Node enforces headersTimeout when it checks its connections (every second, as the gateway sets it).
    expect(Math.max(...closedAfter)).toBeLessThan(HEADERS_TIMEOUT_MS + 3000);
    expect(stack.gateway.child.exitCode).toBeNull();
    expectKeyedSuccess(await send(stack.url, '/v1/properties?country=GB', { headers: { 'x-api-key': KEY.value } }));
  }, 60_000);

  // gateway/server.ts checks connections every second, so the 10 s header timeout holds.
  test('each slow connection is dropped within the 10 s header timeout (plus 3 s)', () => {
    expect(closedAfter).toHaveLength(SLOW);
    expect(Math.max(...closedAfter)).toBeLessThan(HEADERS_TIMEOUT_MS + 3000);
  });
});
