import type { KeyAdmin } from '../../gateway/keys/key-admin';
import type { CommandContext } from './command';

/** The option that makes a state command (or add) edit a keys file instead of the Redis store. */
export const FILE_OPTION = {
  file: { type: 'string', value: 'FILE', help: 'edit this YAML keys file (safely: temp file, validated, renamed) instead of Redis; KEY_STORE=file (or no Redis set) means KEYS_FILE' },
} as const;

/**
 * The keys file a command edits: `--file FILE`, else KEYS_FILE when the key store is the file
 * (KEY_STORE=file given, or left to its default with no Redis set), else undefined (the Redis store).
 */
export async function keysFileTarget(options: Readonly<Record<string, string | boolean | undefined>>): Promise<string | undefined> {
  if (typeof options.file === 'string') return options.file;
  const { parseEnv, keyStoreGiven } = await import('../../gateway/config/env');
  const env = parseEnv();
  if (env.KEY_STORE !== 'file') return undefined;
  // KEY_STORE=file said outright, or nothing but the default with no Redis set: the keys file.
  // With a Redis set and KEY_STORE left out, the operator tools work on Redis, as they always did.
  return keyStoreGiven() || !env.redis ? env.KEYS_FILE : undefined;
}

/**
 * `keys pause|settle|revoke|delete ID`: the change written into the keys file when that is the
 * target (keysFileTarget), else made on the Redis store by `inStore` with the key admin and the id.
 */
export async function changeState(
  ctx: CommandContext,
  command: 'pause' | 'settle' | 'revoke' | 'delete',
  inStore: (admin: KeyAdmin, id: string) => Promise<void>,
  reason?: string,
): Promise<void> {
  const file = await keysFileTarget(ctx.options);
  if (file !== undefined) return (await import('./file-commands')).editState(ctx, file, command, reason);
  await inStore(await ctx.keyAdmin(), ctx.args[0]!);
}
