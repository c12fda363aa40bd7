import os from 'node:os';
import { parseArgs } from 'node:util';
import { runAs } from '../gateway/audit/actor';
import { parseAuditQuery } from '../gateway/audit/audit-query';
import { formatEntryLine } from '../gateway/audit/format-entry';
import { ConfigError } from '../gateway/config/config-error';
import { parseEnv } from '../gateway/config/env';
import { isLimitValue, loadGatewayConfig, MAX_LIMIT } from '../gateway/config/gateway-config';
import { ApiError } from '../gateway/errors';
import { createKeyAdmin, type KeyAdmin } from '../gateway/keys/key-admin';
import { exportKeys } from '../gateway/keys/key-backup';
import { generateKeyValue, sha256Hex } from '../gateway/keys/key-format';
import { connectRedis, type RedisClient } from '../gateway/redis/connect';
import { createRedisHealth } from '../gateway/redis/health';
import { checkAtStartup } from '../gateway/redis/startup-check';
import { redisKeys } from '../gateway/keys/redis-layout';
import { createRedisUsageStore } from '../gateway/usage/redis-usage-store';
import { monthReport, UsageArgumentError, usageTable } from '../gateway/usage/usage-cli';
import { createKeyEventSink } from '../gateway/webhooks/key-events';
import { redisDeadLetters } from '../gateway/webhooks/redis-webhook-queue';
import pino from 'pino';

const USAGE = `usage: npm run --silent keys -- <command>
  create --id ID --tier standard|advanced --countries GB,FR --address ADDR [--per-minute N] [--per-day N] [--per-month N]
  list | show ID | usage ID
  usage ID --days N   accepted and refused requests per UTC day, the last N days (a table)
  report --month YYYY-MM [--csv]   every key's totals for the month (the billing export)
  webhooks dead | webhooks resend ID   webhook events that gave up; send one again
  set ID [--tier ..] [--countries ..] [--address ..] [--per-minute N] [--per-day N] [--per-month N]
  pause ID --reason unpaid_renewal|payment_dispute | settle ID | revoke ID
  roll ID --grace SECONDS
  import FILE [--allow-demo]   upsert every record of a keys file (demo keys refused unless --allow-demo)
  export FILE         write every record (hashes only) to a keys file that import restores
  audit [ID] [--since DATE|DATETIME] [--limit N] [--cursor C] [--json]
                      the audit log, newest first (who changed what, before → after)
  generate            a new key value and its hash, for a keys file (no store needed)
  hash                the SHA-256 of a key value read from stdin (no store needed)
Store commands use the Redis key store (KEY_STORE=redis) at REDIS_URL, REDIS_CLUSTER_NODES or
REDIS_SENTINELS + REDIS_SENTINEL_MASTER, with the gateway's credential and TLS variables.`;

class UsageError extends Error {}

const OPTIONS = {
  id: { type: 'string' }, tier: { type: 'string' }, countries: { type: 'string' }, address: { type: 'string' },
  'per-minute': { type: 'string' }, 'per-day': { type: 'string' }, 'per-month': { type: 'string' },
  reason: { type: 'string' }, grace: { type: 'string' }, 'allow-demo': { type: 'boolean' },
  since: { type: 'string' }, limit: { type: 'string' }, cursor: { type: 'string' }, json: { type: 'boolean' },
  days: { type: 'string' }, month: { type: 'string' }, csv: { type: 'boolean' },
} as const;

function integer(name: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value)) throw new UsageError(`--${name} must be a whole number, got "${value.slice(0, 40)}"`);
  return Number(value);
}

/** A limit or quota option: bounded like every limit (gateway-config.ts LimitValueSchema). */
function limit(name: string, value: string | undefined): number | undefined {
  const n = integer(name, value);
  if (n !== undefined && !isLimitValue(n)) throw new UsageError(`--${name} must be a whole number from 1 to ${MAX_LIMIT}, got "${value!.slice(0, 40)}"`);
  return n;
}

/** The options shared by create and set, as the admin API's snake_case body. */
function recordFields(values: Record<string, string | undefined>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (values.tier !== undefined) out.tier = values.tier;
  if (values.countries !== undefined) out.countries = values.countries.split(',').map((c) => c.trim()).filter(Boolean);
  if (values.address !== undefined) out.address = values.address;
  for (const name of ['per-minute', 'per-day', 'per-month'] as const) {
    const n = limit(name, values[name]);
    if (n !== undefined) out[name.replace('-', '_')] = n;
  }
  return out;
}

const print = (value: unknown): void => void process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);

async function runStoreCommand(admin: KeyAdmin, redis: RedisClient, command: string, args: string[], values: Record<string, string | boolean | undefined>): Promise<void> {
  const strings = Object.fromEntries(Object.entries(values).filter(([, v]) => typeof v === 'string')) as Record<string, string | undefined>;
  const needId = (): string => {
    if (!args[0]) throw new UsageError(`${command} needs a key id`);
    return args[0];
  };
  switch (command) {
    case 'create': {
      const created = await admin.create({ id: values.id, ...recordFields(strings) });
      process.stdout.write(`created key ${created.id}; its value is shown once, on the next line:\n${created.key}\n`);
      return;
    }
    case 'list': return print(await admin.list());
    case 'show': return print(await admin.show(needId()));
    case 'usage': {
      const id = needId();
      if (typeof values.days !== 'string') return print(await admin.usage(id));
      await admin.show(id); // an unknown id is an error, not an empty table
      process.stdout.write(await usageTable(createRedisUsageStore(redis), id, values.days));
      return;
    }
    case 'webhooks': {
      const dead = redisDeadLetters(redis);
      if (args[0] === 'dead') return print(await dead.deadLetters());
      if (args[0] === 'resend') {
        if (!args[1]) throw new UsageError('webhooks resend needs an event id (see webhooks dead)');
        if (!(await dead.resend(args[1]))) throw new UsageError(`no dead letter with id "${args[1]}"`);
        process.stdout.write(`queued ${args[1]} again\n`);
        return;
      }
      throw new UsageError('webhooks takes dead or resend ID');
    }
    case 'report':
      process.stdout.write(await monthReport(createRedisUsageStore(redis), typeof values.month === 'string' ? values.month : undefined, values.csv === true));
      return;
    case 'set': return print(await admin.set(needId(), recordFields(strings)));
    case 'pause': return print(await admin.pause(needId(), strings.reason));
    case 'settle': return print(await admin.settle(needId()));
    case 'revoke': return print(await admin.revoke(needId()));
    case 'roll': {
      const id = needId();
      // --grace is part of the command (CONTRACT): a forgotten one must not end the old value at once.
      const grace = integer('grace', strings.grace);
      if (grace === undefined) throw new UsageError('roll needs --grace SECONDS (0 ends the old value now)');
      const rolled = await admin.roll(id, grace);
      process.stdout.write(`rolled key ${rolled.id}; the new value is shown once, on the next line:\n${rolled.key}\n`);
      return;
    }
    case 'import': {
      if (!args[0]) throw new UsageError('import needs a keys file');
      const ids = await admin.import(args[0], { allowDemo: values['allow-demo'] === true });
      // A large import names its first ids only: one readable line, not a megabyte.
      const shown = ids.length > 20 ? `${ids.slice(0, 20).join(', ')}, … and ${ids.length - 20} more` : ids.join(', ');
      process.stdout.write(`imported ${ids.length} keys: ${shown}\n`);
      return;
    }
    case 'export': {
      if (!args[0]) throw new UsageError('export needs a file to write');
      const count = await exportKeys(redis, args[0]);
      process.stdout.write(`exported ${count} keys to ${args[0]} (hashes only)\n`);
      return;
    }
    case 'audit': {
      const params = new URLSearchParams();
      if (args[0]) params.set('key_id', args[0]);
      for (const name of ['since', 'limit', 'cursor'] as const) if (strings[name] !== undefined) params.set(name, strings[name]);
      const page = await admin.readAudit(parseAuditQuery(params));
      if (values.json === true) return print(page);
      for (const entry of page.entries) process.stdout.write(`${formatEntryLine(entry)}\n`);
      if (page.next_cursor) process.stdout.write(`(older entries: --cursor ${page.next_cursor})\n`);
      return;
    }
    default:
      throw new UsageError(`unknown command "${command}" (run without arguments for the list)`);
  }
}

function readStdin(): Promise<string> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    process.stdin.on('data', (c: Buffer) => chunks.push(c));
    process.stdin.on('end', () => resolve(Buffer.concat(chunks).toString('utf8').replace(/\r?\n$/, '')));
  });
}

async function main(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({ args: argv, options: OPTIONS, allowPositionals: true, strict: true });
  const [command, ...args] = positionals;
  if (!command) throw new UsageError(USAGE);
  if (command === 'generate') {
    const value = generateKeyValue();
    process.stdout.write(`key_sha256: ${sha256Hex(value)}\n${value}\n`);
    return 0;
  }
  if (command === 'hash') {
    const value = await readStdin();
    if (!value) throw new UsageError('hash: no key value on stdin');
    process.stdout.write(`${sha256Hex(value)}\n`);
    return 0;
  }
  const env = parseEnv();
  const topology = env.redis;
  if (!topology) throw new UsageError('no Redis is set (REDIS_URL, REDIS_CLUSTER_NODES or REDIS_SENTINELS): store commands work on the Redis key store (KEY_STORE=redis)');
  const config = loadGatewayConfig(env.GATEWAY_CONFIG);
  const silent = pino({ level: 'silent' });
  const health = createRedisHealth(topology, silent);
  const redis = connectRedis(topology, silent, 'cli', { commandTimeoutMs: 5000, autoPipelining: false, health });
  try {
    const outcome = await checkAtStartup(redis, topology, health, () => redis.smembers(redisKeys.ids), 5000);
    if (outcome.kind === 'refused') throw new UsageError(`environment variable ${outcome.line}`);
    if (outcome.kind === 'away') throw new UsageError(`cannot reach Redis at ${topology.where}`);
    const admin = createKeyAdmin(redis, config, undefined, { maxEntries: env.AUDIT_MAX_ENTRIES, days: env.AUDIT_RETENTION_DAYS }, createKeyEventSink(redis));
    // The CLI has no token: its changes are recorded as the OS user on this host.
    const actor = { name: `cli:${os.userInfo().username}@${os.hostname()}`, channel: 'cli' } as const;
    await runAs(actor, () => runStoreCommand(admin, redis, command, args, values));
    return 0;
  } finally {
    redis.disconnect();
  }
}

main(process.argv.slice(2)).then(
  (code) => { process.exitCode = code; },
  (err: unknown) => {
    const known = err instanceof UsageError || err instanceof UsageArgumentError || err instanceof ApiError || err instanceof ConfigError || (err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS');
    process.stderr.write(`keys: ${known ? (err as Error).message.split('\n')[0] : `unexpected failure: ${(err as Error).message}`}\n`);
    if (err instanceof UsageError && (err as Error).message.includes('\n')) process.stderr.write(`${(err as Error).message.split('\n').slice(1).join('\n')}\n`);
    process.exitCode = 1;
  },
);
