import { printJson, type Command } from '../command';

export const revoke: Command = {
  name: 'revoke',
  synopsis: 'ID',
  summary: 'revokes a key for good (its holder gets 401)',
  positionals: [1, 1],
  async run(ctx) {
    printJson(ctx, await (await ctx.keyAdmin()).revoke(ctx.args[0]!));
  },
};
