import { spawn } from 'node:child_process';
import path from 'node:path';
import { ROOT } from './processes';

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the built keys CLI (`dist/scripts/keys-cli.js`) against `redisUrl`; resolves once all output is read. */
export function runKeysCli(redisUrl: string, args: readonly string[], env: Record<string, string> = {}): Promise<CliResult> {
  return runKeysCliWith({ REDIS_URL: redisUrl, KEY_STORE: 'redis', ...env }, args);
}

/** Runs the built keys CLI with exactly `env` (and PATH): for a cluster, a sentinel, a keys file. */
export function runKeysCliWith(env: Record<string, string>, args: readonly string[]): Promise<CliResult> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [path.join(ROOT, 'dist/scripts/keys-cli.js'), ...args], { cwd: ROOT, env: { PATH: process.env.PATH ?? '', ...env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** `keys usage ID`: the used count of each window. */
export async function usageOf(redisUrl: string, id: string): Promise<Record<'minute' | 'day' | 'month', number>> {
  const result = await runKeysCli(redisUrl, ['usage', id]);
  if (result.code !== 0) throw new Error(`keys usage ${id} failed: ${result.stderr}`);
  const { windows } = JSON.parse(result.stdout) as { windows: Array<{ window: 'minute' | 'day' | 'month'; used: number }> };
  return Object.fromEntries(windows.map((w) => [w.window, w.used])) as Record<'minute' | 'day' | 'month', number>;
}
