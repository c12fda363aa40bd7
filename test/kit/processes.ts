import { spawn, ChildProcess } from 'node:child_process';
import path from 'node:path';
import { budget } from './timing';

export const ROOT = path.resolve(__dirname, '..', '..');

export interface RunningProcess {
  port: number;
  url: string;
  child: ChildProcess;
  /** Every line the process wrote to stdout and stderr so far. */
  output: string[];
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/** How long a process may take to start or to run to its exit on an idle machine (scaled by the load now). */
const IDLE_START_MS = 15_000;

/**
 * Starts `node dist/<script>` with `env` and waits for its JSON log line `"msg":"listening"`,
 * whose `port` field gives the port (the processes are started with port 0, so no port races).
 */
export function startProcess(script: string, env: Record<string, string>, timeoutMs = budget(IDLE_START_MS)): Promise<RunningProcess> {
  return startNodeScript(path.join(ROOT, 'dist', script), env, timeoutMs);
}

/** As `startProcess`, for any script path (the benchmark's baseline proxy is plain JavaScript). */
export function startNodeScript(scriptPath: string, env: Record<string, string>, timeoutMs = budget(IDLE_START_MS)): Promise<RunningProcess> {
  const script = path.basename(scriptPath);
  const child = spawn(process.execPath, [scriptPath], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output: string[] = [];
  let exited: number | null | undefined;
  const exitPromise = new Promise<number | null>((resolve) => child.on('close', (code) => { exited = code; resolve(code); }));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => { child.kill('SIGKILL'); reject(new Error(`${script} did not start within ${timeoutMs} ms:\n${output.join('\n')}`)); }, timeoutMs);
    const onLine = (line: string): void => {
      output.push(line);
      if (!line.includes('"listening"')) return;
      try {
        const entry = JSON.parse(line) as { port?: number };
        if (typeof entry.port !== 'number') return;
        clearTimeout(timer);
        resolve({
          port: entry.port,
          url: `http://127.0.0.1:${entry.port}`,
          child,
          output,
          stop: async (signal: NodeJS.Signals = 'SIGTERM') => {
            if (exited === undefined) child.kill(signal);
            const killer = setTimeout(() => child.kill('SIGKILL'), 5000);
            const code = await exitPromise;
            clearTimeout(killer);
            return code;
          },
        });
      } catch { /* not a JSON line */ }
    };
    for (const stream of [child.stdout!, child.stderr!]) {
      let buffered = '';
      stream.setEncoding('utf8');
      stream.on('data', (chunk: string) => {
        buffered += chunk;
        let nl: number;
        while ((nl = buffered.indexOf('\n')) >= 0) { onLine(buffered.slice(0, nl)); buffered = buffered.slice(nl + 1); }
      });
    }
    void exitPromise.then((code) => { clearTimeout(timer); reject(new Error(`${script} exited with ${code} before listening:\n${output.join('\n')}`)); });
  });
}

/** Runs `node dist/<script>` to completion and returns its exit code and output (for start-up failures). */
export function runToExit(script: string, env: Record<string, string>, timeoutMs = budget(IDLE_START_MS)): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(ROOT, 'dist', script)], { cwd: ROOT, env: { PATH: process.env.PATH ?? '', ...env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => { stdout += d; });
    child.stderr.on('data', (d) => { stderr += d; });
    const timer = setTimeout(() => { child.kill('SIGKILL'); reject(new Error(`${script} did not exit`)); }, timeoutMs);
    // 'close', not 'exit': the output pipes may still hold data when the process has exited.
    child.on('close', (code) => { clearTimeout(timer); resolve({ code, stdout, stderr }); });
  });
}
