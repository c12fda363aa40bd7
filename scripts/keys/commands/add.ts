import { printNewValue, RECORD_OPTIONS, recordFields, stringOption, UsageError, type Command } from '../command';
import { FILE_OPTION, keysFileTarget } from '../file-target';

export const add: Command = {
  name: 'add',
  synopsis: '--id ID --tier standard|advanced --countries GB,FR --addresses A,B [--expires-at TIME] [--note TEXT] [--per-minute N] [--per-day N] [--per-month N] [--file FILE]',
  summary: 'appends a new key to a YAML keys file and prints its value once',
  details:
    'The keys-file counterpart of create: generates a value, appends a record with its SHA-256 (comments and layout of the file are kept), and prints the value alone on the last line, once. ' +
    'The file is written to a temporary file, validated as the gateway loads it, then renamed over the original: a refused record leaves the file untouched. A running gateway reloads the file by itself.',
  options: { ...FILE_OPTION, id: { type: 'string', value: 'ID', help: '1 to 64 characters of A-Z a-z 0-9 . _ -' }, ...RECORD_OPTIONS },
  async run(ctx) {
    const file = await keysFileTarget(ctx.options);
    if (file === undefined) throw new UsageError('add edits a keys file: give --file FILE (or KEY_STORE=file); with KEY_STORE=redis use create', 'add');
    const fields = recordFields(ctx);
    const id = stringOption(ctx, 'id');
    if (id === undefined) throw new UsageError('add needs --id ID', 'add');
    for (const required of ['tier', 'countries'] as const) if (fields[required] === undefined) throw new UsageError(`add needs --${required}`, 'add');
    if (fields.address === undefined && fields.addresses === undefined) throw new UsageError('add needs --addresses (or --address)', 'add');
    const [{ editKeysFile }, { generateKeyValue, sha256Hex }] = await Promise.all([import('../file-edit'), import('../../../gateway/keys/key-format')]);
    const value = generateKeyValue();
    const record: Record<string, unknown> = {
      id,
      key_sha256: sha256Hex(value),
      tier: fields.tier,
      countries: (fields.countries as string[]).map((c) => c.toUpperCase()),
      addresses: fields.addresses ?? [fields.address],
      status: 'active',
      ...(fields.limits !== undefined ? { limits: fields.limits } : {}),
      ...(fields.expires_at !== undefined ? { expires_at: fields.expires_at } : {}),
      ...(fields.note !== undefined ? { note: fields.note } : {}),
    };
    editKeysFile(file, (doc, keys) => {
      if (keys.some((k) => k.get('id') === id)) throw new UsageError(`${file}: a key with id "${id}" already exists`);
      const node = doc.createNode(record);
      // Short lists and the limits on one line, as the file's own records are written.
      for (const field of ['countries', 'addresses', 'limits']) {
        const child = node.get(field, true) as { flow?: boolean } | undefined;
        if (child) child.flow = true;
      }
      (doc.get('keys', true) as { add(v: unknown): void }).add(node);
    });
    printNewValue(ctx, `added key ${id} to ${file}; its value`, value);
  },
};
