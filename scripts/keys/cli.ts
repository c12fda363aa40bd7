import os from 'node:os';
import { terminalSafe } from '../../gateway/output/safe-text';
import { parseArgs } from 'node:util';
import { runAs } from '../../gateway/audit/actor';
import type { RedisClient as Redis } from '../../gateway/redis/connect';
import type { KeyAdmin } from '../../gateway/keys/key-admin';
import { UsageError, type Command, type CommandContext } from './command';
import { COMMANDS } from './commands';

const PROGRAM = 'keys';
const INVOCATION = 'npm run --silent keys -- <command>   (or: node scripts/keys.js <command>)';
const HELP_OPTION = { help: { type: 'boolean', short: 'h' } } as const;

const byName = new Map(COMMANDS.map((c) => [c.name, c]));

function commandSynopsis(command: Command): string {
  return `${PROGRAM} ${command.name}${command.synopsis ? ` ${command.synopsis}` : ''}`;
}

/** `keys help`: every command with its one-line summary. */
export function generalHelp(): string {
  const width = Math.max(...COMMANDS.map((c) => c.name.length), 4);
  const rows = COMMANDS.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`);
  return [
    `usage: ${INVOCATION}`,
    '',
    'Commands:',
    ...rows,
    `  ${'help'.padEnd(width)}  this list, or one command's help: ${PROGRAM} help COMMAND (or ${PROGRAM} COMMAND --help)`,
    '',
    'Store commands work on the Redis key store at REDIS_URL (KEY_STORE=redis).',
    'Exit code 0 on success; 1 with one line on stderr otherwise.',
    '',
  ].join('\n');
}

/** `keys help NAME` / `keys NAME --help`. */
export function commandHelp(command: Command): string {
  const lines = [`usage: ${commandSynopsis(command)}`, '', `${command.summary[0]!.toUpperCase()}${command.summary.slice(1)}.`];
  if (command.details) lines.push('', command.details);
  const options: Array<readonly [string, string]> = Object.entries(command.options ?? {}).map(([name, spec]) => [`--${name}${spec.type === 'string' ? ` ${spec.value ?? 'VALUE'}` : ''}`, spec.help]);
  options.push(['--help', 'this help']);
  const width = Math.max(...options.map(([left]) => left.length));
  lines.push('', 'Options:', ...options.map(([left, help]) => `  ${left.padEnd(width)}  ${help}`), '');
  return lines.join('\n');
}

function readStdin(): Promise<string> {
  // On a terminal it would wait, with no prompt, for an end of input the operator does not know to
  // type (and a key value typed there stays on screen): refuse, saying how to give it.
  if (process.stdin.isTTY) return Promise.reject(new UsageError("this command reads stdin, and stdin is a terminal: pipe the input (printf %s 'the-value' | keys hash)"));
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    process.stdin.on('data', (c: Buffer) => chunks.push(c));
    process.stdin.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    process.stdin.on('error', reject);
  });
}

/** Runs one command line; resolves to the exit code. Help never touches Redis or configuration. */
export async function main(argv: readonly string[]): Promise<number> {
  // Every byte the CLI writes to stdout follows one rule: no raw control, C1 or bidi character
  // reaches the terminal (gateway/output/safe-text.ts); JSON output stays JSON.
  const out = (text: string): void => void process.stdout.write(terminalSafe(text));
  const [name, ...rest] = argv;
  if (name === undefined || name === 'help' || name === '--help' || name === '-h') {
    const topic = name === 'help' ? rest[0] : undefined;
    if (topic === undefined) {
      // Without a command it is a usage mistake: the list goes to stderr and the exit code is 1.
      if (name === undefined) process.stderr.write(generalHelp());
      else out(generalHelp());
      return name === undefined ? 1 : 0;
    }
    const command = byName.get(topic);
    if (!command) throw new UsageError(`unknown command "${topic}" (${PROGRAM} help lists them)`);
    out(commandHelp(command));
    return 0;
  }
  const command = byName.get(name);
  if (!command) throw new UsageError(`unknown command "${name}" (${PROGRAM} help lists them)`);
  const options = { ...(command.options ?? {}), ...HELP_OPTION };
  let parsed;
  try {
    parsed = parseArgs({ args: [...rest], options, allowPositionals: true, strict: true });
  } catch (err) {
    throw new UsageError((err as Error).message.split('\n')[0]!.replace(/ To specify a positional.*$/, ''), command.name);
  }
  if (parsed.values.help) {
    out(commandHelp(command));
    return 0;
  }
  const [min, max] = command.positionals ?? [0, 0];
  if (parsed.positionals.length < min) throw new UsageError(`${command.name}: missing argument (usage: ${commandSynopsis(command)})`, command.name);
  if (parsed.positionals.length > max) throw new UsageError(`${command.name}: unexpected argument "${parsed.positionals[max]}"`, command.name);

  let store: { admin: KeyAdmin; redis: Redis; close(): void } | undefined;
  const open = async () => {
    // Loaded here, not at the top: help and the file commands never load ioredis or the configuration.
    store ??= await (await import('./store')).openKeyAdmin();
    return store;
  };
  const ctx: CommandContext = {
    args: parsed.positionals,
    options: parsed.values,
    keyAdmin: async () => (await open()).admin,
    redis: async () => (await open()).redis,
    out,
    commands: COMMANDS,
    stdin: readStdin,
  };
  // The CLI has no token: its changes are recorded in the audit log as the OS user on this host.
  const actor = { name: `cli:${os.userInfo().username}@${os.hostname()}`, channel: 'cli' } as const;
  try {
    await runAs(actor, () => command.run(ctx));
    return 0;
  } finally {
    store?.close();
  }
}

/** The one line printed for a failure (never a stack trace; a store error keeps its own words). */
export function failureLine(err: unknown): string {
  const e = err as Error & { code?: string };
  const known = err instanceof UsageError || e.name === 'ApiError' || e.name === 'ConfigError' || e.code?.startsWith('ERR_PARSE_ARGS');
  const first = String(e?.message ?? err).split('\n')[0];
  const hint = err instanceof UsageError && err.command ? ` (${PROGRAM} help ${err.command})` : '';
  return `${PROGRAM}: ${known ? first : `unexpected failure: ${first}`}${hint}`;
}
