import { FILE_OPTION, keysFileTarget } from '../file-target';
import { printJson, type Command } from '../command';

export const settle: Command = {
  name: 'settle',
  synopsis: 'ID [--file FILE]',
  summary: 'resumes a paused key',
  options: FILE_OPTION,
  positionals: [1, 1],
  async run(ctx) {
    const file = await keysFileTarget(ctx.options);
    if (file !== undefined) return (await import('../file-commands')).editState(ctx, file, 'settle');
    printJson(ctx, await (await ctx.keyAdmin()).settle(ctx.args[0]!));
  },
};
