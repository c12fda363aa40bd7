import { FILE_OPTION, keysFileTarget } from '../file-target';
import type { Command } from '../command';

export const deleteKey: Command = {
  name: 'delete',
  synopsis: 'ID [--file FILE]',
  summary: 'removes a revoked key for good, which frees its id',
  details: 'Only a revoked key can be deleted (revoke it first). Its counters go with it.',
  options: FILE_OPTION,
  positionals: [1, 1],
  async run(ctx) {
    const file = await keysFileTarget(ctx.options);
    if (file !== undefined) return (await import('../file-commands')).editState(ctx, file, 'delete');
    await (await ctx.keyAdmin()).delete(ctx.args[0]!);
    ctx.out(`deleted key ${ctx.args[0]}\n`);
  },
};
