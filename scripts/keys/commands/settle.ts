import { printJson, type Command } from '../command';

export const settle: Command = {
  name: 'settle',
  synopsis: 'ID',
  summary: 'resumes a paused key',
  positionals: [1, 1],
  async run(ctx) {
    printJson(ctx, await (await ctx.keyAdmin()).settle(ctx.args[0]!));
  },
};
