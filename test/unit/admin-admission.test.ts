/**
 * The admin listener's admission gate: one request worked on at a time, a bounded queue (429
 * past it), and no slot lost when a caller goes away, whether it was waiting or being served.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { ApiError } from '../../gateway/errors';
import { admitAdminWork } from '../../gateway/http/admin-admission';
import { sendError } from '../../gateway/send';

let server: http.Server;
let base = '';
const held: Array<() => void> = [];
let served = 0;

beforeAll(async () => {
  const app = express();
  app.use(admitAdminWork({ concurrent: 1, queued: 2, rest: 0 }));
  app.get('/hold', (_req, res) => {
    served++;
    held.push(() => res.end('held'));
  });
  app.get('/quick', (_req, res) => {
    served++;
    res.end('quick');
  });
  app.use(((err, _req, res, _next) => sendError(res, err instanceof ApiError ? err : new ApiError('internal_error'))) as express.ErrorRequestHandler);
  server = app.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise((r) => server.close(r)));

const until = async (ok: () => boolean): Promise<void> => {
  for (let i = 0; i < 200 && !ok(); i++) await new Promise((r) => setTimeout(r, 10));
  expect(ok()).toBe(true);
};

it('serves one at a time, queues two, refuses the next with 429, and loses no slot to callers that leave', async () => {
  const first = fetch(`${base}/hold`);
  await until(() => held.length === 1);
  // Two wait; one of them goes away while waiting.
  const leaving = new AbortController();
  const gone = fetch(`${base}/quick`, { signal: leaving.signal }).catch(() => 'aborted');
  const second = fetch(`${base}/quick`);
  await new Promise((r) => setTimeout(r, 50));
  expect(served).toBe(1);
  const third = await fetch(`${base}/quick`);
  expect(third.status).toBe(429);
  expect(third.headers.get('retry-after')).toBe('1');
  leaving.abort();
  expect(await gone).toBe('aborted');
  await new Promise((r) => setTimeout(r, 100)); // the server sees the connection close
  held.shift()!();
  expect(await (await first).text()).toBe('held');
  expect(await (await second).text()).toBe('quick');
  // The one being served goes away: its slot is freed all the same.
  const cut = new AbortController();
  const cutOff = fetch(`${base}/hold`, { signal: cut.signal }).catch(() => 'aborted');
  await until(() => held.length === 1);
  cut.abort();
  expect(await cutOff).toBe('aborted');
  const after = await fetch(`${base}/quick`);
  expect(await after.text()).toBe('quick');
  expect(served).toBe(4);
});
