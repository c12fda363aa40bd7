import { createServer, get as httpGet, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { RequestContext } from '../../gateway/pipeline';
import { callContext } from '../../gateway/routes/call-context';
import { CallSignal, createJsonCaller, MAX_ANSWER_BYTES, type CallContext, type JsonCaller } from '../../gateway/upstream/json-caller';
import { budget } from '../kit/timing';

/**
 * The upstream caller's dispatch handler settles on every path, and every path that gives up on an
 * answer gives its connection back: with a pool of ONE connection, the next call must be answered.
 */
/** The caller's timeout: 400 ms on an idle machine, scaled by the load now (reading 8 MB takes longer on a busy one). */
const TIMEOUT_MS = budget(400);
let server: Server;
let base: string;
const sockets = new Set<Socket>();
let closedSockets = 0;

function route(req: IncomingMessage, res: ServerResponse): void {
  switch (req.url) {
    case '/ok':
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"a":1}');
      return;
    case '/busy':
      res.writeHead(503, { 'retry-after': '7' }).end('busy');
      return;
    case '/declared-too-large':
      // Announces more than the cap and sends a little: refused on the head, not waited for.
      res.writeHead(200, { 'content-length': String(MAX_ANSWER_BYTES + 1) });
      res.write('{');
      return;
    case '/streamed-too-large': {
      // Chunked, no length: the cap is found while reading.
      res.writeHead(200, { 'content-type': 'application/json' });
      const chunk = Buffer.alloc(1024 * 1024, 0x20);
      let sent = 0;
      const more = (): void => {
        while (sent <= MAX_ANSWER_BYTES && !res.destroyed) {
          sent += chunk.length;
          if (!res.write(chunk)) return void res.once('drain', more);
        }
      };
      more();
      return;
    }
    case '/head-then-silence':
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"a":');
      return;
    case '/never':
      return;
    default:
      res.writeHead(404).end();
  }
}

beforeAll(async () => {
  server = createServer(route);
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => {
      sockets.delete(socket);
      closedSockets++;
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  for (const socket of sockets) socket.destroy();
  await new Promise((resolve) => server.close(resolve));
});

const ctx = (signal = new CallSignal()) => ({ requestId: 'test', signal });

async function withCaller(run: (caller: JsonCaller) => Promise<void>): Promise<void> {
  const caller = createJsonCaller(base, TIMEOUT_MS, 1);
  try {
    await run(caller);
  } finally {
    await caller.close();
  }
}

/** The pool's one connection is free again: a normal call is answered at once. */
async function expectConnectionFree(caller: JsonCaller): Promise<void> {
  const started = Date.now();
  expect(await caller.get('/ok', ctx())).toEqual({ status: 200, body: { a: 1 }, text: '{"a":1}' });
  expect(Date.now() - started).toBeLessThan(TIMEOUT_MS);
}

describe('upstream JSON caller (undici dispatch handler)', () => {
  it('answers JSON, and a 503 as unavailable with its Retry-After', async () => {
    await withCaller(async (caller) => {
      expect(await caller.get('/ok', ctx())).toEqual({ status: 200, body: { a: 1 }, text: '{"a":1}' });
      expect(await caller.get('/busy', ctx())).toEqual({ kind: 'unavailable', retryAfterSeconds: 7 });
    });
  });

  it.each(['/declared-too-large', '/streamed-too-large'])('refuses an answer over the size cap (%s) and drops its connection', async (path) => {
    await withCaller(async (caller) => {
      const closedBefore = closedSockets;
      const started = Date.now();
      expect(await caller.get(path, ctx())).toEqual({ kind: 'unreadable' });
      expect(Date.now() - started).toBeLessThan(TIMEOUT_MS);
      await expectConnectionFree(caller);
      expect(closedSockets).toBeGreaterThan(closedBefore);
    });
  });

  it('times out a body that stops coming, and the connection it held is not left in use', async () => {
    await withCaller(async (caller) => {
      const started = Date.now();
      expect(await caller.get('/head-then-silence', ctx())).toEqual({ kind: 'timeout' });
      expect(Date.now() - started).toBeLessThan(TIMEOUT_MS * 3);
      await expectConnectionFree(caller);
    });
  });

  it('settles at once when the caller goes away, and the connection it held is not left in use', async () => {
    await withCaller(async (caller) => {
      const signal = new CallSignal();
      const answer = caller.get('/never', ctx(signal));
      await new Promise((resolve) => setTimeout(resolve, 50));
      const started = Date.now();
      signal.abort();
      expect(await answer).toEqual({ kind: 'aborted' });
      expect(Date.now() - started).toBeLessThan(50);
      await expectConnectionFree(caller);
    });
  });

  it('settles at once a call whose caller left before it was made, even while the pool is busy', async () => {
    await withCaller(async (caller) => {
      const holder = new CallSignal();
      const holding = caller.get('/never', ctx(holder)); // the pool's one connection
      const gone = new CallSignal();
      gone.abort();
      const started = Date.now();
      expect(await caller.get('/ok', ctx(gone))).toEqual({ kind: 'aborted' });
      expect(Date.now() - started).toBeLessThan(50);
      holder.abort();
      await holding;
    });
  });

  it('a call context made after the caller left is aborted already', async () => {
    const left = new Promise<CallContext>((resolve) => {
      const probe = createServer((req, res) => {
        res.on('close', () => resolve(callContext({ req, res, requestId: 'left' } as unknown as RequestContext)));
      });
      probe.listen(0, '127.0.0.1', () => {
        const request = httpGet(`http://127.0.0.1:${(probe.address() as AddressInfo).port}/`);
        request.on('error', () => undefined);
        setTimeout(() => {
          request.destroy();
          probe.close();
        }, 50);
      });
    });
    expect((await left).signal.aborted).toBe(true);
  });

  it('settles a call made on a closed pool as unreachable', async () => {
    const caller = createJsonCaller(base, TIMEOUT_MS, 1);
    await caller.close();
    expect(await caller.get('/ok', ctx())).toEqual({ kind: 'unreachable' });
  });
});
