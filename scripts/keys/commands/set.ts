import { printJson, RECORD_OPTIONS, recordFields, type Command } from '../command';

export const set: Command = {
  name: 'set',
  synopsis: 'ID [--tier ..] [--countries ..] [--addresses ..] [--expires-at TIME|none] [--note TEXT] [--account ID] [--per-minute N] [--per-day N] [--per-month N]',
  summary: 'changes a key record; prints it',
  options: RECORD_OPTIONS,
  positionals: [1, 1],
  async run(ctx) {
    printJson(ctx, await (await ctx.keyAdmin()).set(ctx.args[0]!, recordFields(ctx, true)));
  },
};
