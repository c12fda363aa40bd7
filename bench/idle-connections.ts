/**
 * Idle keep-alive connections for the cost curves (curves.ts, CURVES=idle): sockets that each made
 * one request and then stay open, idle, as a browser's or a pooled client's do. The gateway keeps
 * them for its keep-alive timeout (65 s), tracks each in its connection guard and has Node check
 * each for timeouts every second: what that costs is what the curve measures.
 */
import { readdirSync, readFileSync } from 'node:fs';
import net from 'node:net';

/** This process's soft limit on open files (from /proc): the idle sockets each take one. */
export function openFilesLimit(): number {
  const line = readFileSync('/proc/self/limits', 'utf8').split('\n').find((l) => l.startsWith('Max open files'));
  const soft = line?.split(/\s{2,}/)[1];
  return soft === undefined || soft === 'unlimited' ? Number.POSITIVE_INFINITY : Number(soft);
}

/** Open files of a process now (from /proc). */
export const openFiles = (pid: number | 'self'): number => readdirSync(`/proc/${pid}/fd`).length;

export class IdlePool {
  readonly sockets: net.Socket[] = [];
  /** Sockets closed (by the server) since they were opened. */
  closed = 0;

  destroy(): void {
    for (const s of this.sockets) s.destroy();
  }
}

/** One request on a fresh socket; resolves with the socket once the answer's head came back 200. */
function oneRequest(port: number, path: string, key: string): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    let seen = '';
    const onData = (chunk: Buffer): void => {
      seen += chunk.toString('latin1');
      if (!seen.includes('\r\n\r\n')) return;
      socket.off('data', onData);
      if (!seen.startsWith('HTTP/1.1 200')) {
        socket.destroy();
        reject(new Error(`the idle connection's request was answered ${seen.slice(0, 40)}`));
        return;
      }
      // Whatever more of the body arrives is read and dropped: the socket stays open and idle.
      socket.on('data', () => undefined);
      resolve(socket);
    };
    socket.on('data', onData);
    socket.once('error', reject);
    socket.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nx-api-key: ${key}\r\nConnection: keep-alive\r\n\r\n`);
  });
}

/** Adds sockets to `pool` until it holds `total`, 100 being opened at a time. */
export async function openIdle(pool: IdlePool, port: number, path: string, key: string, total: number): Promise<void> {
  while (pool.sockets.length < total) {
    const batch = Math.min(100, total - pool.sockets.length);
    const opened = await Promise.all(Array.from({ length: batch }, () => oneRequest(port, path, key)));
    for (const s of opened) {
      s.on('error', () => undefined);
      s.once('close', () => (pool.closed += 1));
      pool.sockets.push(s);
    }
  }
}
