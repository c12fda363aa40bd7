/**
 * `npm run bench:admin` (or `npx tsx bench/admin-isolation.ts` after a build): does a `viewer`
 * hammering the console and the admin API slow `/v1` for everyone? One gateway on Redis holding
 * ADMIN_KEYS keys (default 50,000) and DEAD_LETTERS dead letters (default 100,000), written straight
 * into Redis. `/v1/ping` is measured with autocannon (c=10) alone, then while VIEWERS loops (default 6)
 * each ask in turn for `/console/keys`, `/admin/webhooks/dead?limit=1`, `/admin/keys?limit=1000` and
 * `/console/audit`, as fast as they are answered. Rounds alternate (alone, hammered) so the shared
 * machine's load falls on both alike; the medians are reported with the ratio of the p99s.
 * BENCH_ROOT runs another checkout's build (e.g. the code before the change) against the same data.
 */
import autocannon from 'autocannon';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Redis from 'ioredis';
import { announcedUrl } from '../test/kit/log-lines';
import { ROOT, startNodeScript, startProcess, type RunningProcess } from '../test/kit/processes';
import { startRedis } from '../test/kit/redis-server';

const KEYS = Number(process.env.ADMIN_KEYS ?? 50_000);
const DEAD = Number(process.env.DEAD_LETTERS ?? 100_000);
const VIEWERS = Number(process.env.VIEWERS ?? 6);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 8);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const GATEWAY_ROOT = path.resolve(process.env.BENCH_ROOT ?? ROOT);
const sha = (v: string): string => createHash('sha256').update(v).digest('hex');

/** Keys and dead letters as the key admin and the webhook queue store them (dead letters also in their index). */
async function fill(redis: Redis, pingKey: string): Promise<void> {
  const now = new Date().toISOString();
  const big = 1_000_000_000;
  for (let i = 0; i < KEYS; i += 1000) {
    const p = redis.pipeline();
    for (let j = i; j < Math.min(KEYS, i + 1000); j++) {
      const id = j === 0 ? 'bench-ping' : `bench-${String(j).padStart(6, '0')}`;
      const hash = j === 0 ? sha(pingKey) : sha(`bench-value-${j}`);
      const record = { id, key_sha256: hash, tier: 'advanced', countries: ['GB', 'FR'], address: '127.0.0.1', status: 'active', limits: { per_minute: big, per_day: big, per_month: big }, note: 'bench record', created_at: now, updated_at: now };
      p.set(`lgw:key:${id}`, JSON.stringify(record)).set(`lgw:keyhash:${hash}`, id).sadd('lgw:keys', id);
    }
    await p.exec();
  }
  await redis.set('lgw:keystore:epoch', `bench-${Date.now()}`);
  for (let i = 0; i < DEAD; i += 1000) {
    const p = redis.pipeline();
    for (let j = i; j < Math.min(DEAD, i + 1000); j++) {
      const id = `msg_bench${String(j).padStart(7, '0')}`;
      const failedAt = new Date(Date.now() - (DEAD - j) * 1000).toISOString();
      const event = JSON.stringify({ id, type: 'key.changed', timestamp: failedAt, data: { key_id: `bench-${j % KEYS}`, note: 'x'.repeat(100) } });
      p.hset('lgw:{webhooks}:dead', id, JSON.stringify({ event, attempts: 12, last_error: 'status 503', failed_at: failedAt }));
      p.zadd('lgw:{webhooks}:dead:index', 0, `${failedAt}\u0000${id}`);
    }
    await p.exec();
  }
}

/** One viewer: the four reads in turn, as fast as they come back, until `stop`; returns each read's times. */
const failures = new Map<string, number>();

async function viewer(adminUrl: string, token: string, stop: () => boolean, times: Map<string, number[]>): Promise<void> {
  const signIn = await fetch(`${adminUrl}/console/sign-in`, { method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: `token=${encodeURIComponent(token)}` });
  const cookie = (signIn.headers.get('set-cookie') ?? '').split(';')[0]!;
  const reads: Array<[string, Record<string, string>]> = [
    ['/console/keys', { cookie }],
    ['/admin/webhooks/dead?limit=1', { authorization: `Bearer ${token}` }],
    ['/admin/keys?limit=1000', { authorization: `Bearer ${token}` }],
    ['/console/audit', { cookie }],
  ];
  while (!stop()) {
    for (const [p, headers] of reads) {
      const t = performance.now();
      const r = await fetch(`${adminUrl}${p}`, { headers });
      await r.arrayBuffer();
      times.get(p)!.push(performance.now() - t);
      // Not a failure of the bench: the code measured may answer 503 (a Redis read timed out); counted.
      if (r.status !== 200) failures.set(`${p} ${r.status}`, (failures.get(`${p} ${r.status}`) ?? 0) + 1);
    }
  }
}

async function main(): Promise<void> {
  const dir = mkdtempSync(path.join(tmpdir(), 'admin-bench-'));
  const keysFile = path.join(dir, 'keys.yaml');
  writeFileSync(keysFile, 'keys: []\n');
  const viewerToken = randomBytes(32).toString('hex');
  const tokensFile = path.join(dir, 'operators.yaml');
  writeFileSync(tokensFile, `- name: vera\n  token_sha256: ${sha(viewerToken)}\n  role: viewer\n`);
  const pingKey = `bench-${randomBytes(16).toString('hex')}`;
  const redisServer = await startRedis();
  const redis = new Redis(redisServer.url);
  const procs: RunningProcess[] = [];
  try {
    const t0 = Date.now();
    await fill(redis, pingKey);
    process.stdout.write(`filled ${KEYS} keys and ${DEAD} dead letters in ${Date.now() - t0} ms\n`);
    const backend = await startProcess('backend-mock/main.js', { BACKEND_PORT: '0' }, 60_000);
    procs.push(backend);
    const gateway = await startNodeScript(path.join(GATEWAY_ROOT, 'dist', 'gateway', 'main.js'), {
      PORT: '0', ADMIN_PORT: '0', KEYS_FILE: keysFile, KEY_STORE: 'redis', REDIS_URL: redisServer.url, GATEWAY_CONFIG: path.join(ROOT, 'config/gateway.yaml'),
      BACKEND_URL: backend.url, CURSOR_SECRET: randomBytes(32).toString('base64url'), ADMIN_TOKENS_FILE: tokensFile, LOG_LEVEL: 'info',
      ADMIN_TOKEN: randomBytes(32).toString('hex'),
    }, 120_000);
    procs.push(gateway);
    const adminUrl = await announcedUrl(gateway, 'admin api listening');
    // From here on the access lines are read and dropped, not kept.
    for (const p of procs) for (const s of [p.child.stdout!, p.child.stderr!]) { s.removeAllListeners('data'); s.resume(); }
    const ping = { url: `${gateway.url}/v1/ping`, connections: 10, headers: { 'x-api-key': pingKey } };
    const warm = await autocannon({ ...ping, duration: 1 });
    if (warm.non2xx) throw new Error(`/v1/ping answered ${warm.non2xx} non-2xx`);
    const alone: Array<{ p50: number; p99: number }> = [];
    const hammered: Array<{ p50: number; p99: number }> = [];
    const times = new Map<string, number[]>(['/console/keys', '/admin/webhooks/dead?limit=1', '/admin/keys?limit=1000', '/console/audit'].map((p) => [p, []]));
    for (let round = 0; round < ROUNDS; round++) {
      const a = await autocannon({ ...ping, duration: SECONDS });
      alone.push({ p50: a.latency.p50, p99: a.latency.p99 });
      let stopped = false;
      const viewers = Array.from({ length: VIEWERS }, () => viewer(adminUrl, viewerToken, () => stopped, times));
      const h = await autocannon({ ...ping, duration: SECONDS });
      stopped = true;
      await Promise.all(viewers);
      hammered.push({ p50: h.latency.p50, p99: h.latency.p99 });
    }
    const median = (xs: number[]): number => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)]!;
    const p99Alone = median(alone.map((r) => r.p99));
    const p99Hammered = median(hammered.map((r) => r.p99));
    const lines = [
      `/v1/ping c=10, ${KEYS} keys, ${DEAD} dead letters, ${VIEWERS} viewer loops, ${ROUNDS} alternating rounds of ${SECONDS} s (${GATEWAY_ROOT}):`,
      `  alone     p50 ${median(alone.map((r) => r.p50))} ms  p99 ${p99Alone} ms  (rounds: ${alone.map((r) => r.p99).join(', ')})`,
      `  hammered  p50 ${median(hammered.map((r) => r.p50))} ms  p99 ${p99Hammered} ms  (rounds: ${hammered.map((r) => r.p99).join(', ')})`,
      `  p99 ratio ${(p99Hammered / p99Alone).toFixed(2)}x`,
      ...[...times].map(([p, ts]) => `  ${p.padEnd(30)} ${ts.length} reads, median ${median(ts).toFixed(1)} ms`),
      ...[...failures].map(([what, n]) => `  not 200: ${what} × ${n}`),
    ];
    process.stdout.write(`${lines.join('\n')}\n`);
  } finally {
    redis.disconnect();
    await Promise.all(procs.map((p) => p.stop()));
    await redisServer.stop();
  }
}

void main().catch((err) => {
  process.stderr.write(`${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
