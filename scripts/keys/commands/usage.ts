import { printJson, type Command } from '../command';

export const usage: Command = {
  name: 'usage',
  synopsis: 'ID',
  summary: "a key's current counters (minute, day, month) with their limits and reset times",
  positionals: [1, 1],
  async run(ctx) {
    printJson(ctx, await (await ctx.keyAdmin()).usage(ctx.args[0]!));
  },
};
