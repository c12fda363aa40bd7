/**
 * `npm test` runs this first: it checks what the suite needs beyond npm and stops at once, with
 * one line naming the missing thing and the Debian package that brings it, instead of letting
 * dozens of suites fail one by one. Exit 0 when all is there (a line on stderr for a Node line
 * past its end of life), 1 otherwise.
 *
 * Kept free of the project's own modules and of anything but Node's standard library, so it works
 * before `npm run build` and on any Node that can start it.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

/** The Node lines CI runs the suite on; the oldest one is the minimum `engines` names. */
export const TESTED_NODE_LINES = [22, 26] as const;
/** Node 20 still runs the suite (the development machine has it) but is past its end of life. */
const OLDEST_RUNNING_LINE = 20;

export interface Need {
  /** What is missing, as a reader would name it. */
  readonly what: string;
  /** The Debian package that brings it. */
  readonly debian: string;
  /** Why the tests need it. */
  readonly why: string;
  /** Undefined when present, else the reason it is not usable. */
  check(): string | undefined;
}

function onPath(command: string, args: readonly string[]): string | undefined {
  const result = spawnSync(command, args, { encoding: 'utf8', timeout: 10_000 });
  if (result.error) return (result.error as NodeJS.ErrnoException).code === 'ENOENT' ? 'not found on PATH' : result.error.message;
  return undefined;
}

/**
 * A redis-server built with TLS understands `tls-port` and fails on the (absent) certificate; one
 * built without it fails on the directive or on the missing TLS layer before any certificate.
 */
function redisHasTls(): string | undefined {
  const result = spawnSync('redis-server', ['--port', '0', '--tls-port', '1', '--tls-cert-file', '/nonexistent/preflight.crt', '--tls-key-file', '/nonexistent/preflight.key', '--tls-ca-cert-file', '/nonexistent/preflight.ca', '--save', '', '--appendonly', 'no', '--logfile', ''], { encoding: 'utf8', timeout: 10_000 });
  if (result.error) return (result.error as NodeJS.ErrnoException).code === 'ENOENT' ? 'not found on PATH' : result.error.message;
  const out = `${result.stdout}${result.stderr}`;
  return /Failed to load certificate|Failed to configure TLS/i.test(out) ? undefined : 'built without TLS support';
}

export const NEEDS: readonly Need[] = [
  { what: 'redis-server', debian: 'redis-server', why: 'integration tests start their own Redis', check: () => onPath('redis-server', ['--version']) },
  { what: 'redis-server with TLS', debian: 'redis-server', why: 'the TLS tests start a Redis with tls-port (Debian builds it with TLS)', check: redisHasTls },
  { what: 'redis-cli', debian: 'redis-tools', why: 'tests drive Redis with it', check: () => onPath('redis-cli', ['--version']) },
  { what: 'chromium at /usr/bin/chromium', debian: 'chromium', why: 'the /docs page is tested in a real browser', check: () => (existsSync('/usr/bin/chromium') ? undefined : 'not installed') },
  { what: 'openssl', debian: 'openssl', why: 'tests make throw-away TLS certificates with it', check: () => onPath('openssl', ['version']) },
];

/** Undefined when the running Node is fine; else `{ fatal, line }`. */
export function checkNode(version: string): { fatal: boolean; line: string } | undefined {
  const major = Number(/^v?(\d+)/.exec(version)?.[1]);
  const lines = TESTED_NODE_LINES.join(' and ');
  if (major >= TESTED_NODE_LINES[0]) return undefined;
  if (major >= OLDEST_RUNNING_LINE) return { fatal: false, line: `preflight: Node ${version} is past its end of life; the suite is tested on Node ${lines} (npm install node@${TESTED_NODE_LINES[1]} brings a current one)` };
  return { fatal: true, line: `preflight: Node ${version} is too old: the tests need Node ${lines} (Debian package nodejs from a current release, or npm install node@${TESTED_NODE_LINES[1]})` };
}

function main(): void {
  const node = checkNode(process.version);
  if (node) {
    process.stderr.write(`${node.line}\n`);
    if (node.fatal) process.exit(1);
  }
  for (const need of NEEDS) {
    const problem = need.check();
    if (problem !== undefined) {
      process.stderr.write(`preflight: ${need.what} is missing (${problem}; ${need.why}): install the Debian package ${need.debian} (apt-get install ${need.debian})\n`);
      process.exit(1);
    }
  }
}

if (require.main === module) main();
