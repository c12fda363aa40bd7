/**
 * The keys CLI's help: `keys help`, `keys help COMMAND`, `keys COMMAND --help` and `-h` for every
 * command, with no Redis and no configuration in the environment; mistakes give one line and exit 1.
 */
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { COMMANDS } from '../../scripts/keys/commands';
import { makeTempDir, removeTempDirs } from '../kit/gateway-stack';
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

  it.each(COMMANDS.map((c) => c.name))('%s: help COMMAND and COMMAND --help give its usage and options without Redis', (name) => {
    const command = COMMANDS.find((c) => c.name === name)!;
    // -h once (it is the same option for every command): each run is a process start on a loaded machine.
    const outputs = [keys(['help', name]), keys([name, name === 'create' ? '-h' : '--help'])];
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

  it('webhooks: a wrong action, resend without an id or dead with an extra word is named as that mistake, before any Redis is needed', () => {
    for (const [args, line] of [
      [['webhooks', 'frob'], 'keys: webhooks takes dead or resend ID (keys help webhooks)'],
      [['webhooks', 'resend'], 'keys: webhooks resend needs an event id (see webhooks dead) (keys help webhooks)'],
      [['webhooks', 'dead', 'x'], 'keys: webhooks dead: unexpected argument "x" (keys help webhooks)'],
    ] as const) {
      const r = keys([...args]);
      expect(r.code).toBe(1);
      expect(r.stderr.trim()).toBe(line);
    }
  });

  it('hash with stdin a terminal says how to pipe the value instead of waiting', async () => {
    // script(1) gives the CLI a terminal that stays open while our pipe to it does: a CLI waiting for its end never ends.
    const child = spawn('script', ['-qec', `'${process.execPath}' '${path.join(ROOT, 'dist/scripts/keys-cli.js')}' hash`, '/dev/null'], { stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    const ended = await new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => resolve(false), 8_000);
      child.on('close', () => resolve(true));
      child.on('close', () => clearTimeout(timer));
    });
    child.stdin.end();
    if (!ended) child.kill('SIGKILL');
    expect(ended).toBe(true);
    expect(out).toContain('keys: this command reads stdin, and stdin is a terminal: pipe the input');
  });

  it('keys completion prints a bash completion script generated from the command table', () => {
    const script = keys(['completion']);
    expect(script.code).toBe(0);
    const file = path.join(makeTempDir(), 'keys-completion.bash');
    fs.writeFileSync(file, script.stdout);
    const complete = (words: string[]): string[] => {
      const r = spawnSync('bash', ['-c', `source '${file}'; COMP_WORDS=(${words.map((w) => `'${w}'`).join(' ')}); COMP_CWORD=${words.length - 1}; _listings_keys; printf '%s\\n' "\${COMPREPLY[@]}"`], { encoding: 'utf8' });
      return r.stdout.split('\n').filter(Boolean).sort();
    };
    expect(complete(['keys', 'pa'])).toEqual(['pause']);
    expect(complete(['keys', ''])).toEqual([...COMMANDS.map((c) => c.name), 'help'].sort());
    expect(complete(['keys', 'pause', '--'])).toEqual(['--file', '--help', '--reason']);
    expect(complete(['keys', 'help', 're'])).toEqual(['report', 'requests', 'revoke']);
  });

  it('a store command without a Redis says so in one line', () => {
    const r = keys(['list']);
    expect(r.code).toBe(1);
    expect(r.stderr.trim()).toBe('keys: no Redis is set (REDIS_URL, REDIS_CLUSTER_NODES or REDIS_SENTINELS): store commands work on the Redis key store (KEY_STORE=redis)');
  });

});

describe('scripts/keys.js, the launcher npm run keys uses', () => {
  // A project of its own (one source, its own dist/), so rebuilding never touches the repository's
  // build while other suites run from it; typescript comes from the repository's node_modules.
  const dir = makeTempDir();
  const run = () => spawnSync(process.execPath, [path.join(dir, 'scripts', 'keys.js'), 'help'], { cwd: dir, env: { PATH: process.env.PATH ?? '' }, encoding: 'utf8', timeout: 120_000 });
  const writeSource = (text: string, mtimeSeconds: number): void => {
    const file = path.join(dir, 'scripts', 'keys-cli.ts');
    fs.writeFileSync(file, text);
    fs.utimesSync(file, mtimeSeconds, mtimeSeconds);
  };

  beforeAll(() => {
    fs.mkdirSync(path.join(dir, 'scripts'));
    fs.copyFileSync(path.join(ROOT, 'scripts', 'keys.js'), path.join(dir, 'scripts', 'keys.js'));
    fs.symlinkSync(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'));
    fs.writeFileSync(path.join(dir, 'tsconfig.json'), JSON.stringify({
      compilerOptions: { target: 'ES2022', module: 'CommonJS', strict: true, outDir: 'dist', rootDir: '.', incremental: true, tsBuildInfoFile: 'dist/.tsbuildinfo', types: ['node'] },
      include: ['scripts/**/*.ts'],
    }));
  });
  afterAll(() => removeTempDirs());

  it('compiles when there is no build or a source is newer, runs the build as it is otherwise, and retries a failed build', () => {
    const now = Date.now() / 1000;
    writeSource("process.stdout.write('version one\\n');\n", now - 100);
    const first = run();
    expect(first.stderr).toContain('compiling');
    expect(first.stdout).toBe('version one\n');
    expect(first.status).toBe(0);

    const second = run();
    expect(second.stderr).toBe('');
    expect(second.stdout).toBe('version one\n');

    // The client package's own build (npm run client:pack) is not a source: its newer .d.ts files
    // must not make every call compile (a no-op build leaves the build info's date as it was).
    fs.mkdirSync(path.join(dir, 'client', 'dist'), { recursive: true });
    fs.writeFileSync(path.join(dir, 'client', 'dist', 'index.d.ts'), 'export {};\n');
    fs.utimesSync(path.join(dir, 'client', 'dist', 'index.d.ts'), now + 500, now + 500);
    expect(run()).toMatchObject({ stderr: '', stdout: 'version one\n' });

    writeSource("process.stdout.write('version two\\n');\n", now + 1000);
    const changed = run();
    expect(changed.stderr).toContain('compiling');
    expect(changed.stdout).toBe('version two\n');

    writeSource("const n: number = 'not a number';\nprocess.stdout.write(String(n));\n", now + 2000);
    const broken = run();
    expect(broken.status).toBe(1);
    expect(broken.stdout).toBe('');
    expect(broken.stderr).toMatch(/keys: the TypeScript build failed/);
    // The failed build is not taken for a fresh one: its build info is dated 1970, so the next call compiles again.
    expect(fs.statSync(path.join(dir, 'dist', '.tsbuildinfo')).mtimeMs).toBe(0);
  }, 180_000);
});
