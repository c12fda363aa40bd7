// gateway/operators/: operators: named tokens (ADMIN_TOKEN, ADMIN_TOKENS_FILE), roles and what each may do,
// the bearer check and the guessing budgets.
import { createHash, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';
import { ConfigError } from '../config/config-error';
import { readYamlFile } from '../config/yaml-file';
import { ROLES, type Role } from './roles';

/** Someone holding an operator token: the token's name (the audit log's actor) and its role. */
export interface Operator {
  readonly name: string;
  readonly role: Role;
}

const OperatorEntry = z
  .object({
    name: z.string().regex(/^[A-Za-z0-9._@-]{1,64}$/, 'must be 1 to 64 characters of A-Z a-z 0-9 . _ @ -'),
    token_sha256: z.string().regex(/^[0-9a-fA-F]{64}$/, 'must be the SHA-256 of the token as 64 hex characters'),
    role: z.enum(ROLES, { errorMap: () => ({ message: 'must be viewer, operator or admin' }) }),
  })
  .strict();

const TokensFile = z.array(OperatorEntry, { invalid_type_error: 'must be a YAML list of entries with name, token_sha256 and role' });

export interface OperatorTokenEntry {
  readonly name: string;
  /** SHA-256 digest of the token (32 bytes). */
  readonly digest: Buffer;
  readonly role: Role;
}

/** Names an entry in an error line: `[2] (name alice)`. */
function describeEntry(raw: unknown, path: ReadonlyArray<string | number>): string {
  const index = path[0];
  if (typeof index !== 'number') return path.join('.');
  const name = Array.isArray(raw) ? (raw[index] as { name?: unknown } | undefined)?.name : undefined;
  const field = path.slice(1).join('.');
  return `entry [${index}]${typeof name === 'string' ? ` (name ${name})` : ''}${field ? `, field ${field}` : ''}`;
}

/**
 * Reads ADMIN_TOKENS_FILE. Only hashes are in it; a problem is a one-line ConfigError naming the
 * file, the entry and the field (never a token: the file has none). Names and hashes are unique,
 * so an audit entry names exactly one token holder.
 */
export function loadOperatorTokens(file: string, reservedNames: readonly string[] = []): OperatorTokenEntry[] {
  const entries = readYamlFile(file, TokensFile, describeEntry);
  const names = new Set<string>();
  entries.forEach((entry, i) => {
    if (reservedNames.includes(entry.name)) throw configError(file, `entry [${i}] (name ${entry.name}), field name: "${entry.name}" is ADMIN_TOKEN's name`);
  });
  const hashes = new Set<string>();
  return entries.map((entry, i) => {
    const hash = entry.token_sha256.toLowerCase();
    if (names.has(entry.name)) throw configError(file, `entry [${i}] (name ${entry.name}), field name: the name is used by an earlier entry`);
    if (hashes.has(hash)) throw configError(file, `entry [${i}] (name ${entry.name}), field token_sha256: the same token as an earlier entry`);
    names.add(entry.name);
    hashes.add(hash);
    return { name: entry.name, role: entry.role, digest: Buffer.from(hash, 'hex') };
  });
}

const configError = (file: string, message: string): ConfigError => new ConfigError(`${file}: ${message}`);

export const tokenDigest = (token: string): Buffer => createHash('sha256').update(token, 'utf8').digest();

export interface OperatorRegistry {
  /** The operator a bearer token belongs to, or undefined. Constant time in the token. */
  authenticate(token: string): Operator | undefined;
  /** The operator of this name now (a session re-checks it: a removed token ends its sessions). */
  byName(name: string): Operator | undefined;
  /** The entry of this name now, with its token's digest (a console session checks the token is unchanged). */
  entry(name: string): OperatorTokenEntry | undefined;
  /** Hot reload: swaps the file's entries in one assignment. */
  replace(fileEntries: readonly OperatorTokenEntry[]): void;
}

/**
 * Every operator token the admin listener accepts: `ADMIN_TOKEN` (an `admin` named `admin`) and the
 * entries of `ADMIN_TOKENS_FILE`. A token is hashed once and its digest compared with every entry's
 * by `timingSafeEqual`, without stopping at a match, so the time taken says nothing about which
 * entry (if any) is close.
 */
export function createOperatorRegistry(adminToken: string | undefined, fileEntries: readonly OperatorTokenEntry[] = []): OperatorRegistry {
  const fromEnv: OperatorTokenEntry[] = adminToken ? [{ name: 'admin', role: 'admin', digest: tokenDigest(adminToken) }] : [];
  let entries: readonly OperatorTokenEntry[] = [...fromEnv, ...fileEntries];
  return {
    authenticate(token) {
      if (token.length === 0) return undefined;
      const given = tokenDigest(token);
      let found: OperatorTokenEntry | undefined;
      for (const entry of entries) {
        if (timingSafeEqual(given, entry.digest) && !found) found = entry;
      }
      return found ? { name: found.name, role: found.role } : undefined;
    },
    byName(name) {
      const entry = entries.find((e) => e.name === name);
      return entry ? { name: entry.name, role: entry.role } : undefined;
    },
    entry(name) {
      return entries.find((e) => e.name === name);
    },
    replace(next) {
      entries = [...fromEnv, ...next];
    },
  };
}
