/** The option that makes a state command (or add) edit a keys file instead of the Redis store. */
export const FILE_OPTION = {
  file: { type: 'string', value: 'FILE', help: 'edit this YAML keys file (safely: temp file, validated, renamed) instead of Redis; KEY_STORE=file (the default) means KEYS_FILE' },
} as const;

/**
 * The keys file a command edits: `--file FILE`, else KEYS_FILE when the key store is the file
 * (KEY_STORE=file, the default, as for the gateway), else undefined (the Redis store).
 */
export async function keysFileTarget(options: Readonly<Record<string, string | boolean | undefined>>): Promise<string | undefined> {
  if (typeof options.file === 'string') return options.file;
  const { parseEnv } = await import('../../gateway/config/env');
  const env = parseEnv();
  return env.KEY_STORE === 'file' ? env.KEYS_FILE : undefined;
}
