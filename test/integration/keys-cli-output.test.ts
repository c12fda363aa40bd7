/**
 * `keys audit`, `keys show` and `keys list` print operator-set text under one rule (issue 23
 * finding 3): a note holding escape sequences (erase line, window title, clipboard, a C1 CSI, a
 * right-to-left override) reaches the terminal escaped as \uXXXX; JSON output stays JSON with the
 * same values. Real redis-server and the built CLI; the record and its audit entry are written the
 * way an operator token's PATCH leaves them.
 */
import Redis from 'ioredis';
import { runKeysCli } from '../kit/keys-cli';
import { startRedis, type RedisServer } from '../kit/redis-server';

const NOTE = 'paid\u001b[2K\r\u001b]0;owned\u0007\u001b]52;c;ZXZpbA==\u0007\u009b31m\u202eevil\n2026-11-27T10:00:00.000Z  ada (admin_api)  revoke other-key';
const RAW = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/;

let server: RedisServer;
let redis: Redis;

beforeAll(async () => {
  server = await startRedis();
  redis = new Redis(server.url);
  const now = new Date().toISOString();
  const record = { id: 'noted', key_sha256: 'a'.repeat(64), tier: 'standard', countries: ['GB'], address: '127.0.0.1', status: 'active', note: NOTE, created_at: now, updated_at: now };
  await redis.multi().set('lgw:key:noted', JSON.stringify(record)).set(`lgw:keyhash:${'a'.repeat(64)}`, 'noted').sadd('lgw:keys', 'noted').set('lgw:keystore:epoch', 'test').exec();
  await redis.xadd('lgw:audit', '*', 'actor', 'otto', 'channel', 'admin_api', 'action', 'change', 'key_id', 'noted', 'changes', JSON.stringify({ note: { before: null, after: NOTE } }));
}, 30_000);
afterAll(async () => {
  redis.disconnect();
  await server.stop();
});

it('keys audit ID: one line per entry, the note escaped, no fake entry', async () => {
  const r = await runKeysCli(server.url, ['audit', 'noted']);
  expect(r.code).toBe(0);
  expect(r.stdout).not.toMatch(RAW);
  expect(r.stdout.trimEnd().split('\n')).toHaveLength(1);
  expect(r.stdout).toContain('\\u001b]52;c;');
});

it.each([['show', 'noted'], ['list'], ['audit', 'noted', '--json']])('keys %s: JSON with the same note, no raw control character', async (...args) => {
  const r = await runKeysCli(server.url, args);
  expect(r.code).toBe(0);
  expect(r.stdout).not.toMatch(RAW);
  expect(JSON.stringify(JSON.parse(r.stdout))).toContain(JSON.stringify(NOTE).slice(1, -1));
});
