import { FILE_OPTION, keysFileTarget } from '../file-target';
import { printJson, type Command } from '../command';

export const revoke: Command = {
  name: 'revoke',
  synopsis: 'ID [--file FILE]',
  summary: 'revokes a key for good (its holder gets 401)',
  options: FILE_OPTION,
  positionals: [1, 1],
  async run(ctx) {
    const file = await keysFileTarget(ctx.options);
    if (file !== undefined) return (await import('../file-commands')).editState(ctx, file, 'revoke');
    printJson(ctx, await (await ctx.keyAdmin()).revoke(ctx.args[0]!));
  },
};
