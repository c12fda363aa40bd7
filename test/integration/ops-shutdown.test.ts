/**
 * SIGTERM under load: the gateway stops accepting, finishes every request already in flight, closes
 * its upstream and keep-alive sockets, and exits 0.
 */
import net from 'node:net';
import { Agent, request } from 'undici';
import {
  DEFAULT_TIERS, eventually, makeTempDir, randomKeyValue, removeTempDirs, startGateway, startStub, writeGatewayConfig, writeKeysFile,
  type Proc, type Stub,
} from '../kit/gateway-stack';
import { waitForLine } from '../kit/log-lines';

const value = randomKeyValue('drain');
let stub: Stub;
let gateway: Proc;
/** The data service answers each page 400 ms after this is resolved (held: requests stay in flight). */
let held: Promise<void> = Promise.resolve();

beforeAll(async () => {
  // A data service that takes 400 ms per page, so requests are in flight when the signal comes.
  stub = await startStub((_req, res) => {
    void held.then(() => setTimeout(() => {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ items: [{ id: 'GB-1', country: 'GB', listing_type: 'sale', property_type: 'house' }], next_after: null }));
    }, 400));
  });
  const dir = makeTempDir();
  gateway = await startGateway({
    backendUrl: stub.url,
    keysFile: writeKeysFile([{ id: 'drain', value, tier: 'standard', countries: ['GB'], address: '127.0.0.1', status: 'active' }], dir),
    gatewayConfig: writeGatewayConfig(DEFAULT_TIERS, dir),
  });
}, 30_000);

afterAll(async () => {
  await gateway?.stop();
  await stub?.close();
  removeTempDirs();
});

it('finishes every in-flight request, then exits 0', async () => {
  const agent = new Agent({ connections: 40, keepAliveTimeout: 30_000 });
  const call = async (): Promise<number | string> => {
    try {
      const answer = await request(`${gateway.url}/v1/properties?country=GB`, { headers: { 'x-api-key': value }, dispatcher: agent });
      await answer.body.text();
      return answer.statusCode;
    } catch (err) {
      return (err as { code?: string }).code ?? 'error';
    }
  };
  // Warm keep-alive connections, then put 30 requests in flight: the data service holds every one
  // until the gateway has begun its shutdown (waited for, not timed, so a loaded machine cannot race it).
  expect(await Promise.all(Array.from({ length: 10 }, call))).toEqual(Array(10).fill(200));
  let release!: () => void;
  held = new Promise<void>((resolve) => (release = resolve));
  const reachedBefore = stub.requests.length;
  const inFlight = Array.from({ length: 30 }, call);
  await eventually('30 requests at the data service', () => stub.requests.length - reachedBefore >= 30, { intervalMs: 20 });
  const exited = new Promise<number | null>((resolve) => gateway.child.once('exit', (code) => resolve(code)));
  gateway.child.kill('SIGTERM');
  await waitForLine(gateway, '"msg":"shutting down"');
  release();
  expect(await Promise.all(inFlight)).toEqual(Array(30).fill(200));
  expect(await exited).toBe(0);
  // Nothing listens any more: a new request is refused at once, it does not hang.
  expect(await call()).toMatch(/ECONNREFUSED|UND_ERR_SOCKET|ECONNRESET/);
  expect(gateway.output.some((l) => l.includes('"msg":"stopped"'))).toBe(true);
  await agent.close();
});

describe('a request that arrives during the drain', () => {
  let second: Proc;
  beforeAll(async () => {
    const dir = makeTempDir();
    second = await startGateway({
      backendUrl: stub.url,
      keysFile: writeKeysFile([{ id: 'drain', value, tier: 'standard', countries: ['GB'], address: '127.0.0.1', status: 'active' }], dir),
      gatewayConfig: writeGatewayConfig(DEFAULT_TIERS, dir),
    });
  }, 30_000);
  afterAll(async () => {
    await second?.stop();
  });

  it('is answered (with Connection: close), and the gateway still exits 0', async () => {
    const socket = net.connect(second.port, '127.0.0.1');
    await new Promise((r) => socket.once('connect', r));
    let received = '';
    socket.on('data', (d: Buffer) => (received += d.toString('latin1')));
    const closed = new Promise((r) => socket.once('close', r));
    // A request whose body is still coming when SIGTERM arrives…
    socket.write(`GET /v1/ping HTTP/1.1\r\nHost: x\r\nx-api-key: ${value}\r\nContent-Length: 10\r\n\r\n12345`);
    await new Promise((r) => setTimeout(r, 100));
    const exited = new Promise<number | null>((resolve) => second.child.once('exit', (code) => resolve(code)));
    second.child.kill('SIGTERM');
    // The drain has begun (waited for: on a loaded machine the signal may take a while to be handled).
    await waitForLine(second, '"msg":"shutting down"');
    // …then the rest of it, and a second request on the same connection (answered synchronously: 404).
    socket.write('67890GET /nope HTTP/1.1\r\nHost: x\r\n\r\n');
    await closed;
    expect(received).toMatch(/^HTTP\/1\.1 200 OK/);
    expect(received).toMatch(/[Cc]onnection: close/);
    expect(await exited).toBe(0);
  });
});
