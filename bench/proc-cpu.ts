import { readFileSync } from 'node:fs';

/** The launch flag the gateway ships with (Dockerfile, `npm run start:gateway`): 4 MB semi-spaces for V8's young generation. */
export const SHIPPED_NODE_OPTIONS = '--max-semi-space-size=4';

/** CPU seconds of a process and its children (GATEWAY_WORKERS > 1 runs workers), from /proc. */
export function cpuSeconds(pid: number): number {
  const own = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  let ticks = Number(own[11]) + Number(own[12]);
  let children = '';
  try {
    children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8');
  } catch {
    // no children file (an older kernel): the process alone
  }
  for (const child of children.split(' ').filter(Boolean)) {
    try {
      const f = readFileSync(`/proc/${child}/stat`, 'utf8').split(') ')[1]!.split(' ');
      ticks += Number(f[11]) + Number(f[12]);
    } catch {
      // gone meanwhile
    }
  }
  return ticks / 100;
}

/** CPU µs (user + system) this process has used so far. */
export function ownCpuMicros(): number {
  const u = process.cpuUsage();
  return u.user + u.system;
}

/** Resident memory of a process in MB, from /proc. */
export const rssMb = (pid: number): number => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024;

/** Drains a process's output once it listens: a benchmark must not buffer its log lines. */
export function drainOutput<P extends { child: { stdout: NodeJS.ReadableStream | null; stderr: NodeJS.ReadableStream | null } }>(p: P): P {
  for (const stream of [p.child.stdout!, p.child.stderr!]) {
    stream.removeAllListeners('data');
    stream.resume();
  }
  return p;
}
