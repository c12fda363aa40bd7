import { printJson, type Command } from '../command';

export const show: Command = {
  name: 'show',
  synopsis: 'ID',
  summary: 'one key record (never a hash or a value)',
  positionals: [1, 1],
  async run(ctx) {
    printJson(ctx, await (await ctx.keyAdmin()).show(ctx.args[0]!));
  },
};
