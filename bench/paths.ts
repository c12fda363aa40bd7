/**
 * `npx tsx bench/paths.ts`: gateway CPU per request by path (404, ping, first page, page with a
 * cursor), embedded mode, c=10. Shows where the hot path spends its CPU, for profiling work.
 */
import autocannon from 'autocannon';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { stringify } from 'yaml';
import { ROOT, startProcess, type RunningProcess } from '../test/kit/processes';

const KEY = `paths-${randomBytes(8).toString('hex')}`;
const times = (pid: number): [number, number] => {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return [Number(f[11]) / 100, Number(f[12]) / 100];
};

async function main(): Promise<void> {
  const dir = mkdtempSync(path.join(tmpdir(), 'paths-'));
  const keys = path.join(dir, 'keys.yaml');
  const big = 1_000_000_000;
  writeFileSync(keys, stringify({ keys: [{ id: 'paths', key_sha256: createHash('sha256').update(KEY).digest('hex'), tier: 'advanced', countries: ['GB'], address: '127.0.0.1', status: 'active', limits: { per_minute: big, per_day: big, per_month: big } }] }));
  const procs: RunningProcess[] = [];
  const quiet = (p: RunningProcess): RunningProcess => {
    for (const s of [p.child.stdout!, p.child.stderr!]) { s.removeAllListeners('data'); s.resume(); }
    procs.push(p);
    return p;
  };
  const backend = quiet(await startProcess('backend-mock/main.js', { BACKEND_PORT: '0' }, 60_000));
  const gateway = quiet(await startProcess('gateway/main.js', { PORT: '0', KEYS_FILE: keys, GATEWAY_CONFIG: path.join(ROOT, 'config/gateway.yaml'), BACKEND_URL: backend.url, CURSOR_SECRET: randomBytes(32).toString('base64url'), LOG_LEVEL: process.env.LOG_LEVEL ?? 'info' }));
  const first = (await (await fetch(`${gateway.url}/v1/properties?country=GB&limit=5`, { headers: { 'x-api-key': KEY } })).json()) as { next_cursor: string };
  const paths = ['/nope', '/v1/ping', '/v1/properties?country=GB&limit=5', `/v1/properties?country=GB&limit=5&cursor=${first.next_cursor}`];
  for (const p of paths) {
    const opts = { url: `${gateway.url}${p}`, connections: 10, headers: { 'x-api-key': KEY } };
    await autocannon({ ...opts, duration: 1 });
    const [u0, s0] = times(gateway.child.pid!);
    const r = await autocannon({ ...opts, duration: 4 });
    const [u1, s1] = times(gateway.child.pid!);
    const per = (x: number): string => ((x * 1e6) / r.requests.total).toFixed(0).padStart(4);
    process.stdout.write(`${p.slice(0, 50).padEnd(52)} ${String(r.requests.total).padStart(6)} req  ${per(u1 - u0 + s1 - s0)} µs CPU/req (user ${per(u1 - u0)}, system ${per(s1 - s0)})  non-2xx ${r.non2xx}\n`);
  }
  await Promise.all(procs.map((p) => p.stop()));
}

void main();
