/**
 * A bounded, seeded fuzz of connection behaviour (gateway/connection-guard.ts): pipelined requests
 * of every kind (assets, the document, keyed and unkeyed API calls, unknown paths), read whole,
 * half-read then dropped, never read, or cut in the middle of a request head, many connections at
 * once. After the clients go away the gateway's open descriptors return to their baseline, RSS stays
 * near its baseline, and no request is logged twice.
 */
import fs from 'node:fs';
import net from 'node:net';
import fc from 'fast-check';
import { randomKeyValue, eventually, sleep, startStack, UNLIMITED, type KeySpec, type Stack } from '../kit/gateway-stack';
import { accessLines } from '../kit/log-lines';

const KEY: KeySpec = { id: 'fuzz-conn', value: randomKeyValue('fuzz'), tier: 'standard', countries: ['GB'], address: '127.0.0.1', status: 'active', limits: UNLIMITED };
const PATHS = [
  '/docs/assets/swagger-ui-bundle.js', '/docs/assets/swagger-ui.css', '/docs/assets/favicon-32x32.png', '/v1/openapi.json', '/docs',
  '/v1/ping', '/v1/properties?country=GB&limit=5', '/v1/properties/gb-00001?country=GB', '/v1/nothing', '/v1/insights',
];
type Behaviour = 'read' | 'half-read' | 'no-read' | 'cut-head';

let stack: Stack;
beforeAll(async () => {
  stack = await startStack({ keys: [KEY], gateways: [{ WRITE_STALL_TIMEOUT_MS: '1500' }] });
}, 60_000);
afterAll(async () => {
  await stack?.stop();
});

const pid = (): number => stack.gateway.child.pid!;
/**
 * Open descriptors, not counting the pooled keep-alive connections to the data service (the
 * upstream pool keeps some open by design, bounded by its size): the rest must return to baseline.
 */
function fds(): number {
  const backendPort = Number(new URL(stack.backendUrl).port).toString(16).toUpperCase().padStart(4, '0');
  const toBackend = new Set<string>();
  for (const line of fs.readFileSync(`/proc/${pid()}/net/tcp`, 'utf8').split('\n').slice(1)) {
    const f = line.trim().split(/\s+/);
    if (f.length > 9 && f[2]!.endsWith(`:${backendPort}`)) toBackend.add(f[9]!);
  }
  let count = 0;
  for (const fd of fs.readdirSync(`/proc/${pid()}/fd`)) {
    let target = '';
    try {
      target = fs.readlinkSync(`/proc/${pid()}/fd/${fd}`);
    } catch {
      continue; // closed meanwhile
    }
    const inode = /^socket:\[(\d+)\]$/.exec(target)?.[1];
    if (!inode || !toBackend.has(inode)) count++;
  }
  return count;
}
const rssMb = (): number => Number(/VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid()}/status`, 'utf8'))![1]) / 1024;

let seq = 0;
/** One client connection: writes its requests in one go, behaves, then goes away. Resolves when closed. */
function connection(paths: number[], keyed: boolean[], behaviour: Behaviour, readBytes: number, holdMs: number): Promise<void> {
  return new Promise((resolve) => {
    const socket = net.connect(stack.gateway.port, '127.0.0.1');
    let received = 0;
    socket.on('error', () => undefined);
    socket.on('close', () => resolve());
    const text = paths
      .map((p, i) => `GET ${PATHS[p]} HTTP/1.1\r\nHost: gw\r\nX-Request-Id: fz-${++seq}\r\n${keyed[i] ? `x-api-key: ${KEY.value}\r\n` : ''}\r\n`)
      .join('');
    if (behaviour === 'cut-head') {
      socket.write(`${text}GET /v1/ping HTTP/1.1\r\nHost: g`);
    } else {
      socket.write(text);
    }
    if (behaviour === 'read') socket.on('data', (d: Buffer) => (received += d.length));
    else if (behaviour === 'half-read') {
      socket.on('data', (d: Buffer) => {
        received += d.length;
        if (received >= readBytes) socket.pause();
      });
    } else socket.pause();
    setTimeout(() => socket.destroy(), holdMs);
  });
}

test('pipelined and half-read connections: descriptors and RSS back near baseline once the clients are gone', async () => {
  // Warm-up, so the baseline includes what the first answers load.
  await Promise.all([0, 1, 2].map(() => connection([0, 1, 3, 5, 6], [false, false, false, true, true], 'read', 0, 1500)));
  await sleep(500);
  const baseFds = fds();
  const baseRss = rssMb();
  let peakFds = baseFds;
  let peakRss = baseRss;

  const conn = fc.record({
    paths: fc.array(fc.integer({ min: 0, max: PATHS.length - 1 }), { minLength: 1, maxLength: 40 }),
    keyed: fc.array(fc.boolean(), { minLength: 40, maxLength: 40 }),
    behaviour: fc.constantFrom<Behaviour>('read', 'half-read', 'no-read', 'cut-head'),
    readBytes: fc.integer({ min: 1, max: 2_000_000 }),
    holdMs: fc.integer({ min: 50, max: 2500 }),
  });
  await fc.assert(
    fc.asyncProperty(fc.array(conn, { minLength: 1, maxLength: 12 }), async (conns) => {
      await Promise.all(conns.map((c) => connection(c.paths, c.keyed, c.behaviour, c.readBytes, c.holdMs)));
      peakFds = Math.max(peakFds, fds());
      peakRss = Math.max(peakRss, rssMb());
    }),
    { seed: 1212, numRuns: 15 },
  );

  // The clients are gone: the gateway lets go of everything.
  await eventually('descriptors back near the baseline', () => fds() <= baseFds + 2, { timeoutMs: 15_000, intervalMs: 200 }).catch(() => undefined);
  const endFds = fds();
  const endRss = rssMb();
  process.stdout.write(`connection fuzz: descriptors ${baseFds} → peak ${peakFds} → ${endFds}; RSS ${baseRss.toFixed(0)} → peak ${peakRss.toFixed(0)} → ${endRss.toFixed(0)} MB\n`);
  expect(endFds).toBeLessThanOrEqual(baseFds + 2);
  expect(endRss - baseRss).toBeLessThan(80);

  // No request logged twice.
  const ids = accessLines(stack.gateway.output).map((l) => l.req.id);
  expect(ids.length - new Set(ids).size).toBe(0);
  expect(stack.gateway.child.exitCode).toBeNull();
}, 120_000);
