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
