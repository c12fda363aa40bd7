import { printNewValue, RECORD_OPTIONS, recordFields, stringOption, type Command } from '../command';

export const create: Command = {
  name: 'create',
  synopsis: '--id ID --tier standard|advanced --countries GB,FR --addresses A,B [--expires-at TIME] [--note TEXT] [--account ID] [--per-minute N] [--per-day N] [--per-month N]',
  summary: 'stores a new key in Redis and prints its value once',
  details: 'The key value is printed alone on the last line of stdout, once: only its SHA-256 is stored.',
  options: { id: { type: 'string', value: 'ID', help: '1 to 64 characters of A-Z a-z 0-9 . _ -' }, ...RECORD_OPTIONS },
  async run(ctx) {
    const created = await (await ctx.keyAdmin()).create({ id: stringOption(ctx, 'id'), ...recordFields(ctx) });
    printNewValue(ctx, `created key ${created.id}; its value`, created.key);
  },
};
