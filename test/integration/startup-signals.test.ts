/**
 * Signals during start-up: a SIGHUP while the gateway starts is remembered and runs once start-up is
 * done (it used to end the process, exit 129); SIGTERM while it starts exits 0 with one line; with
 * GATEWAY_WORKERS=2, SIGHUPs to the primary while its workers start do not bring the gateway down
 * (a worker still starting used to die of it, and the gateway with it, exit 1 with no line saying why).
 * Start-up is held for a few seconds by a Redis that does not answer (it waits 3 s for it).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { gatewayEnv, makeTempDir, refusedPort, removeTempDirs, writeGatewayConfig, writeKeysFile } from '../kit/gateway-stack';
import { ROOT } from '../kit/processes';

jest.setTimeout(60_000);

interface Started {
  child: ChildProcess;
  lines: string[];
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Starts the gateway and collects its lines (stdout and stderr) without waiting for it to listen. */
function start(extra: Record<string, string>): Started {
  const dir = makeTempDir();
  const env = gatewayEnv(writeKeysFile([], dir), writeGatewayConfig(undefined, dir), extra);
  const child = spawn(process.execPath, [path.join(ROOT, 'dist', 'gateway', 'main.js')], { cwd: ROOT, env: { PATH: process.env.PATH ?? '', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  const lines: string[] = [];
  for (const stream of [child.stdout!, child.stderr!]) {
    let buffered = '';
    stream.setEncoding('utf8');
    stream.on('data', (chunk: string) => {
      buffered += chunk;
      const parts = buffered.split('\n');
      buffered = parts.pop()!;
      lines.push(...parts);
    });
  }
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once('close', (code, signal) => resolve({ code, signal })));
  return { child, lines, exited };
}

async function lineWith(s: Started, text: string, timeoutMs = 30_000): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  let exit: unknown;
  void s.exited.then((e) => (exit = e));
  for (;;) {
    const line = s.lines.find((l) => l.includes(text));
    if (line) return line;
    if (exit !== undefined || Date.now() > deadline) throw new Error(`no line with ${text} (exit ${JSON.stringify(exit)}):\n${s.lines.join('\n')}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

let running: Started[] = [];
let unansweringRedis: string;

beforeAll(async () => {
  unansweringRedis = `redis://127.0.0.1:${await refusedPort()}`;
});

afterEach(async () => {
  for (const s of running) {
    if (s.child.exitCode === null && s.child.signalCode === null) s.child.kill('SIGKILL');
    await s.exited;
  }
  running = [];
});

afterAll(() => removeTempDirs());

const started = (s: Started): Started => (running.push(s), s);

it('one process: a SIGHUP while starting is logged, start-up goes on, and the reload runs once it serves', async () => {
  const s = started(start({ REDIS_URL: unansweringRedis, OPS_PORT: '0' }));
  // The ops listener comes first; start-up then waits for Redis.
  await lineWith(s, '"msg":"ops listening"');
  s.child.kill('SIGHUP');
  await lineWith(s, 'reload asked during start-up');
  s.child.kill('SIGHUP'); // a second one is remembered with the first: one reload
  await lineWith(s, '"msg":"listening"');
  const reloaded = await lineWith(s, '"msg":"configuration reloaded"');
  expect(reloaded).toContain('SIGHUP during start-up');
  expect(s.lines.filter((l) => l.includes('reload asked during start-up'))).toHaveLength(1);
  expect(s.child.exitCode).toBeNull();
  // Served now: SIGHUP reloads as ever.
  s.child.kill('SIGHUP');
  const deadline = Date.now() + 10_000;
  while (s.lines.filter((l) => l.includes('"msg":"configuration reloaded"')).length < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  expect(s.lines.filter((l) => l.includes('"msg":"configuration reloaded"'))).toHaveLength(2);
  s.child.kill('SIGTERM');
  expect(await s.exited).toEqual({ code: 0, signal: null });
});

it.each(['SIGTERM', 'SIGINT'] as const)('one process: %s while starting exits 0 with one line', async (signal) => {
  const s = started(start({ REDIS_URL: unansweringRedis, OPS_PORT: '0' }));
  await lineWith(s, '"msg":"ops listening"');
  s.child.kill(signal);
  expect(await s.exited).toEqual({ code: 0, signal: null });
  const line = s.lines.find((l) => l.includes('stopped during start-up'));
  expect(line).toBeDefined();
  expect(JSON.parse(line!)).toMatchObject({ level: 'info', signal, msg: 'stopped during start-up, before serving' });
  expect(s.lines.some((l) => l.includes('"msg":"listening"'))).toBe(false);
});

it('GATEWAY_WORKERS=2: SIGHUPs to the primary while its workers start do not bring the gateway down; each worker reloads once it listens', async () => {
  const s = started(start({ REDIS_URL: unansweringRedis, GATEWAY_WORKERS: '2' }));
  await lineWith(s, '"msg":"starting workers"');
  // SIGHUP every 100 ms until the gateway listens: the first worker starts alone (3 s waiting for
  // Redis), then the second; both are still starting for most of it.
  let hups = 0;
  while (!s.lines.some((l) => l.includes('"msg":"listening"'))) {
    if (s.child.exitCode !== null) throw new Error(`the gateway exited (${s.child.exitCode}):\n${s.lines.join('\n')}`);
    s.child.kill('SIGHUP');
    hups++;
    await new Promise((r) => setTimeout(r, 100));
  }
  expect(hups).toBeGreaterThan(10);
  // The primary says "listening" when both workers told it so over IPC; a worker's own line comes
  // through its own stdout and may arrive a moment later.
  const listeningDeadline = Date.now() + 10_000;
  const workersListening = (): number => s.lines.filter((l) => l.includes('"msg":"worker listening"')).length;
  while (workersListening() < 2 && Date.now() < listeningDeadline) await new Promise((r) => setTimeout(r, 20));
  expect(workersListening()).toBe(2);
  // Every worker reloads after it listens (it may have read the files before the change).
  const deadline = Date.now() + 10_000;
  const reloadedWorkers = (): Set<number> =>
    new Set(s.lines.filter((l) => l.includes('"msg":"configuration reloaded"')).map((l) => (JSON.parse(l) as { worker: number }).worker));
  while (reloadedWorkers().size < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  expect(reloadedWorkers().size).toBe(2);
  expect(s.lines.some((l) => l.includes('during start-up: the gateway stops'))).toBe(false);
  s.child.kill('SIGTERM');
  expect(await s.exited).toEqual({ code: 0, signal: null });
});

it('GATEWAY_WORKERS=2: a worker that dies while starting makes the gateway stop with a line saying why', async () => {
  const s = started(start({ REDIS_URL: unansweringRedis, GATEWAY_WORKERS: '2' }));
  await lineWith(s, '"msg":"starting workers"');
  // The first worker, the primary's only child process while it starts: killed hard.
  const pid = await new Promise<number>((resolve, reject) => {
    const deadline = Date.now() + 10_000;
    const look = (): void => {
      const ps = spawn('pgrep', ['-P', String(s.child.pid)]);
      let out = '';
      ps.stdout.on('data', (d) => (out += d));
      ps.on('close', () => {
        const first = Number(out.trim().split('\n')[0]);
        if (first > 0) resolve(first);
        else if (Date.now() > deadline) reject(new Error('no worker process'));
        else setTimeout(look, 50);
      });
    };
    look();
  });
  process.kill(pid, 'SIGKILL');
  const exit = await s.exited;
  expect(exit.code).not.toBe(0);
  const line = s.lines.find((l) => l.includes('during start-up: the gateway stops'));
  expect(line).toBeDefined();
  expect(JSON.parse(line!)).toMatchObject({ level: 'error', signal: 'SIGKILL', msg: 'a worker ended by SIGKILL during start-up: the gateway stops' });
});
