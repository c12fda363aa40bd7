import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { checkNode, NEEDS, TESTED_NODE_LINES } from '../../scripts/test-preflight';

const SCRIPT = path.resolve(__dirname, '../../dist/scripts/test-preflight.js');

/** Runs the built preflight with a PATH holding only links to the named commands. */
function runWith(commands: readonly string[]): { status: number | null; stderr: string } {
  const bin = mkdtempSync(path.join(tmpdir(), 'gw-preflight-'));
  try {
    for (const command of commands) {
      const found = spawnSync('sh', ['-c', `command -v ${command}`], { encoding: 'utf8' }).stdout.trim();
      if (!found) throw new Error(`${command} is needed to run this test`);
      symlinkSync(found, path.join(bin, command));
    }
    const result = spawnSync(process.execPath, [SCRIPT], { encoding: 'utf8', env: { PATH: bin } });
    return { status: result.status, stderr: result.stderr };
  } finally {
    rmSync(bin, { recursive: true, force: true });
  }
}

describe('test preflight', () => {
  test('a current Node line passes; Node 20 warns and goes on; older stops', () => {
    expect(checkNode('v22.12.0')).toBeUndefined();
    expect(checkNode('v26.10.0')).toBeUndefined();
    expect(checkNode('v20.20.2')).toEqual({ fatal: false, line: expect.stringContaining('end of life') });
    expect(checkNode('v18.20.0')).toEqual({ fatal: true, line: expect.stringMatching(/Node v18\.20\.0 is too old.*nodejs/) });
  });

  test('with everything on PATH it passes silently (the machine running the suite has it all)', () => {
    const result = runWith(['redis-server', 'redis-cli', 'openssl']);
    expect(result.stderr.split('\n').filter((l) => l && !l.includes('end of life'))).toEqual([]);
    expect(result.status).toBe(0);
  });

  test.each([
    ['redis-server', ['redis-cli', 'openssl'], 'redis-server'],
    ['redis-cli', ['redis-server', 'openssl'], 'redis-tools'],
    ['openssl', ['redis-server', 'redis-cli'], 'openssl'],
  ])('without %s it stops with one line naming it and its Debian package', (missing, present, debian) => {
    const result = runWith(present);
    expect(result.status).toBe(1);
    const lines = result.stderr.split('\n').filter((l) => l && !l.includes('end of life'));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(`${missing} is missing`);
    expect(lines[0]).toContain(`apt-get install ${debian}`);
  });

  test('the Node lines it names are the ones .ci/run runs the suite on, and the oldest is the engines minimum', () => {
    const ci = /^NODE_LINES=\(([\d ]+)\)$/m.exec(readFileSync(path.resolve(__dirname, '../../.ci/run'), 'utf8'));
    expect(ci?.[1]!.split(' ').map(Number).sort((a, b) => a - b)).toEqual([...TESTED_NODE_LINES]);
    const engines = (JSON.parse(readFileSync(path.resolve(__dirname, '../../package.json'), 'utf8')) as { engines: { node: string } }).engines.node;
    expect(engines).toMatch(new RegExp(`^\\^${TESTED_NODE_LINES[0]}\\.`));
  });

  test('every need names a Debian package', () => {
    for (const need of NEEDS) expect(need.debian).toMatch(/^[a-z0-9.+-]+$/);
  });
});
