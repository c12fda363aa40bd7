import type { Command } from '../command';
import { holderStores } from '../holders';

export const exportFile: Command = {
  name: 'export',
  synopsis: 'FILE',
  summary: 'writes every record of the Redis store (hashes only) to a keys file that import restores',
  positionals: [1, 1],
  async run(ctx) {
    const { exportKeys } = await import('../../../gateway/keys/key-backup');
    const { exportAccounts } = await import('../../../gateway/accounts/account-backup');
    const accounts = await exportAccounts((await holderStores(ctx)).accounts);
    const count = await exportKeys(await ctx.redis(), ctx.args[0]!, accounts);
    ctx.out(`exported ${count} keys${accounts.length ? ` and ${accounts.length} accounts` : ''} to ${ctx.args[0]} (hashes only)\n`);
  },
};
