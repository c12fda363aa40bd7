/**
 * The keys CLI's help: `keys help`, `keys help COMMAND`, `keys COMMAND --help` and `-h` for every
 * command, with no Redis and no configuration in the environment; mistakes give one line and exit 1.
 */
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { COMMANDS } from '../../scripts/keys/commands';
import { ROOT } from '../kit/processes';

/** Runs the CLI with an empty environment (no REDIS_URL, no KEY_STORE): help must not need them. */
function keys(args: string[], launcher = 'dist/scripts/keys-cli.js'): { code: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [path.join(ROOT, launcher), ...args], { cwd: ROOT, env: { PATH: process.env.PATH ?? '' }, encoding: 'utf8', timeout: 60_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('keys CLI help', () => {
  it('keys help and keys --help list every command, exit 0', () => {
    for (const args of [['help'], ['--help'], ['-h']]) {
      const r = keys(args);
      expect(r.code).toBe(0);
      expect(r.stderr).toBe('');
      for (const c of COMMANDS) expect(r.stdout).toMatch(new RegExp(`^  ${c.name} +${c.summary.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`, 'm'));
    }
  });

  it.each(COMMANDS.map((c) => c.name))('%s: help COMMAND, COMMAND --help and -h give its usage and options without Redis', (name) => {
    const command = COMMANDS.find((c) => c.name === name)!;
    const outputs = [keys(['help', name]), keys([name, '--help']), keys([name, '-h'])];
    for (const r of outputs) {
      expect(r.code).toBe(0);
      expect(r.stderr).toBe('');
      expect(r.stdout.split('\n')[0]).toBe(`usage: keys ${name}${command.synopsis ? ` ${command.synopsis}` : ''}`);
      for (const option of Object.keys(command.options ?? {})) expect(r.stdout).toContain(`--${option}`);
      expect(r.stdout).not.toMatch(/REDIS_URL is not set/);
    }
    expect(outputs[1]!.stdout).toBe(outputs[0]!.stdout);
  });

  it('no command, an unknown command, an unknown option or a missing id: one line on stderr (plus the list for no command), exit 1', () => {
    const none = keys([]);
    expect(none.code).toBe(1);
    expect(none.stderr).toContain('Commands:');
    for (const args of [['frobnicate'], ['help', 'frobnicate'], ['show', '--frob'], ['show'], ['show', 'a', 'b'], ['roll', 'x']]) {
      const r = keys(args);
      expect(r.code).toBe(1);
      expect(r.stdout).toBe('');
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
      expect(r.stderr).toMatch(/^keys: /);
    }
  });

  it('a store command without REDIS_URL says so in one line', () => {
    const r = keys(['list']);
    expect(r.code).toBe(1);
    expect(r.stderr.trim()).toBe('keys: REDIS_URL is not set: store commands work on the Redis key store (KEY_STORE=redis)');
  });

  it('scripts/keys.js (what npm run keys runs) answers from the build without compiling when nothing changed', () => {
    const r = keys(['help'], 'scripts/keys.js');
    expect(r.code).toBe(0);
    expect(r.stderr).toBe('');
    expect(r.stdout).toContain('Commands:');
  });
});
