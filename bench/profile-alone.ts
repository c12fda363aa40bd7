/**
 * `npx tsx bench/profile-alone.ts` (after `npm run build`): the CPU profile of `npm run bench` alone
 * (bench/results/profile.md): a gateway on Redis (counters and key store), page 2 of a walk, c=50
 * for BENCH_SECONDS (default 5) after a 2 s warm-up, profiled with V8's sampler; the CPU per request
 * that scales the shares is the profiled process's own, from /proc (a profiled process runs a little
 * slower than the unprofiled one `npm run bench` scales by).
 */
import autocannon from 'autocannon';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Redis from 'ioredis';
import { stringify } from 'yaml';
import { loadGatewayConfig } from '../gateway/config/gateway-config';
import { createKeyAdmin } from '../gateway/keys/key-admin';
import { ROOT, startProcess, type RunningProcess } from '../test/kit/processes';
import { startRedis } from '../test/kit/redis-server';
import { cpuSeconds, SHIPPED_NODE_OPTIONS } from './proc-cpu';
import { renderProfile, summariseProfile } from './profile';

async function main(): Promise<void> {
  const seconds = Number(process.env.BENCH_SECONDS ?? 5);
  const tmp = mkdtempSync(path.join(tmpdir(), 'gateway-profile-'));
  const key = `profile-${randomBytes(12).toString('hex')}`;
  const unlimited = { per_minute: 1_000_000_000, per_day: 1_000_000_000, per_month: 1_000_000_000 };
  const keysFile = path.join(tmp, 'keys.yaml');
  writeFileSync(keysFile, stringify({ keys: [{ id: 'profile', key_sha256: createHash('sha256').update(key).digest('hex'), tier: 'advanced', countries: ['GB'], address: '127.0.0.1', status: 'active', limits: unlimited }] }));
  const running: RunningProcess[] = [];
  const redisServer = await startRedis();
  const redis = new Redis(redisServer.url);
  try {
    await createKeyAdmin(redis, loadGatewayConfig(path.join(ROOT, 'config/gateway.yaml'))).import(keysFile);
    const quiet = (p: RunningProcess): RunningProcess => {
      for (const s of [p.child.stdout!, p.child.stderr!]) { s.removeAllListeners('data'); s.resume(); }
      running.push(p);
      return p;
    };
    const backend = quiet(await startProcess('backend-mock/main.js', { BACKEND_PORT: '0', LOG_LEVEL: 'info' }, 60_000));
    const profileFile = path.join(tmp, 'gateway.cpuprofile');
    const gw = quiet(await startProcess('gateway/main.js', {
      PORT: '0', LOG_LEVEL: 'info', CURSOR_SECRET: randomBytes(32).toString('base64url'), GATEWAY_CONFIG: path.join(ROOT, 'config/gateway.yaml'),
      BACKEND_URL: backend.url, KEYS_FILE: keysFile, REDIS_URL: redisServer.url, KEY_STORE: 'redis',
      NODE_OPTIONS: `${SHIPPED_NODE_OPTIONS} --require ${path.join(ROOT, 'bench/peers/cpu-profile.js')}`, CPU_PROFILE_FILE: profileFile,
    }, 60_000));
    const first = (await (await fetch(`${gw.url}/v1/properties?country=GB&limit=20`, { headers: { 'x-api-key': key } })).json()) as { next_cursor: string };
    const url = `${gw.url}/v1/properties?country=GB&limit=20&cursor=${first.next_cursor}`;
    const headers = { 'x-api-key': key };
    await autocannon({ url, connections: 50, duration: 2, headers });
    const before = cpuSeconds(gw.child.pid!);
    const r = await autocannon({ url, connections: 50, duration: seconds, headers });
    const cpuUs = ((cpuSeconds(gw.child.pid!) - before) * 1e6) / r.requests.total;
    if (r.non2xx > 0) throw new Error(`${r.non2xx} non-2xx answers`);
    running.splice(running.indexOf(gw), 1);
    await gw.stop();
    if (!existsSync(profileFile)) throw new Error('no profile written');
    const out = `# CPU profile: gateway, Redis counters + Redis key store, c=50 (bench/profile-alone.ts, ${new Date().toISOString()}, ${process.version})\n\n${renderProfile(summariseProfile(profileFile), cpuUs)}`;
    writeFileSync(path.join(ROOT, 'bench/results/profile.md'), out);
    process.stdout.write(out);
  } finally {
    redis.disconnect();
    await Promise.all(running.map((p) => p.stop().catch(() => undefined)));
    await redisServer.stop();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`profile failed: ${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
