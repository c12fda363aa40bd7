import type { Command } from '../command';

export const deleteKey: Command = {
  name: 'delete',
  synopsis: 'ID',
  summary: 'removes a revoked key for good, which frees its id',
  details: 'Only a revoked key can be deleted (revoke it first). Its counters go with it.',
  positionals: [1, 1],
  async run(ctx) {
    await (await ctx.keyAdmin()).delete(ctx.args[0]!);
    ctx.out(`deleted key ${ctx.args[0]}\n`);
  },
};
