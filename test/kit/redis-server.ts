import Redis from 'ioredis';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { budget } from './timing';

/** A free TCP port on loopback (bound then released; redis-server cannot announce port 0). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

export interface RedisServer {
  port: number;
  url: string;
  /** Kills the server at once (SIGKILL), as a crash would. */
  kill(): Promise<void>;
  /** Freezes the server (SIGSTOP): connections stay open, nothing is answered, as a stalled Redis. */
  freeze(): void;
  /** Resumes a frozen server (SIGCONT): it then runs what it was sent meanwhile. */
  thaw(): void;
  /** Starts it again on the same port (empty unless persistent). */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

function waitForPort(port: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  return new Promise((resolve, reject) => {
    const attempt = (): void => {
      const socket = net.connect(port, '127.0.0.1');
      socket.once('connect', () => {
        socket.write('PING\r\n');
        socket.once('data', () => {
          socket.destroy();
          resolve();
        });
      });
      socket.once('error', () => {
        socket.destroy();
        if (Date.now() > deadline) reject(new Error(`redis-server did not start on ${port}`));
        else setTimeout(attempt, 25);
      });
    };
    attempt();
  });
}

/**
 * A real redis-server on a free loopback port, stopped by the test. With `persistent`, every write
 * is in an append-only file before it is acknowledged, so a killed and restarted server has its data,
 * as a production Redis would; without, it starts empty.
 */
export async function startRedis(options: { persistent?: boolean } = {}): Promise<RedisServer> {
  const port = await freePort();
  const persistence = options.persistent
    ? ['--dir', mkdtempSync(path.join(tmpdir(), 'redis-it-')), '--appendonly', 'yes', '--appendfsync', 'always']
    : ['--appendonly', 'no'];
  let child: ChildProcess;
  const launch = async (): Promise<void> => {
    child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', ...persistence, '--protected-mode', 'no'], {
      stdio: 'ignore',
    });
    await waitForPort(port, budget(5000));
  };
  const killWith = (signal: NodeJS.Signals): Promise<void> =>
    new Promise((resolve) => {
      if (child.exitCode !== null || (child.signalCode !== null && child.signalCode !== 'SIGSTOP')) return resolve();
      child.once('exit', () => resolve());
      child.kill(signal);
      // A frozen server would not act on SIGTERM until resumed.
      child.kill('SIGCONT');
    });
  await launch();
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    kill: () => killWith('SIGKILL'),
    freeze: () => void child.kill('SIGSTOP'),
    thaw: () => void child.kill('SIGCONT'),
    restart: launch,
    stop: () => killWith('SIGTERM'),
  };
}

/**
 * A redis-server and one client for the whole suite: started in `beforeAll`, stopped in `afterAll`
 * (registered here); read `.redis` and `.server` inside the tests.
 */
export function redisForSuite(): { readonly server: RedisServer; readonly redis: Redis } {
  let server: RedisServer | undefined;
  let redis: Redis | undefined;
  beforeAll(async () => {
    server = await startRedis();
    redis = new Redis(server.url);
  });
  afterAll(async () => {
    redis?.disconnect();
    await server?.stop();
  });
  return {
    get server() {
      if (!server) throw new Error('redisForSuite: read inside a test, after beforeAll');
      return server;
    },
    get redis() {
      if (!redis) throw new Error('redisForSuite: read inside a test, after beforeAll');
      return redis;
    },
  };
}
