import type { Command } from '../command';

export const exportFile: Command = {
  name: 'export',
  synopsis: 'FILE',
  summary: 'writes every record of the Redis store (hashes only) to a keys file that import restores',
  positionals: [1, 1],
  async run(ctx) {
    const { exportKeys } = await import('../../../gateway/keys/key-backup');
    const count = await exportKeys(await ctx.redis(), ctx.args[0]!);
    ctx.out(`exported ${count} keys to ${ctx.args[0]} (hashes only)\n`);
  },
};
