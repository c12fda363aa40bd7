import type { Command } from '../command';
import { holderStores } from '../holders';

export const importFile: Command = {
  name: 'import',
  synopsis: 'FILE [--allow-demo]',
  summary: 'upserts every record of a YAML keys file into Redis',
  details: 'The file is validated whole first (as `keys validate` does); nothing is written when any entry is invalid.',
  options: { 'allow-demo': { type: 'boolean', help: 'accept the README\'s demo keys (refused otherwise: they must never reach production silently)' } },
  positionals: [1, 1],
  async run(ctx) {
    // Accounts first: the keys may name them.
    const { importAccounts } = await import('../../../gateway/accounts/account-backup');
    const { readKeysFile } = await import('../../../gateway/keys/keys-file');
    const { refuseDemoKeys } = await import('../../../gateway/keys/key-backup');
    const accountIds = await importAccounts((await holderStores(ctx)).accounts, ctx.args[0]!, () => {
      const entries = readKeysFile(ctx.args[0]!);
      if (ctx.options['allow-demo'] !== true) refuseDemoKeys(ctx.args[0]!, entries);
    });
    if (accountIds.length) ctx.out(`imported ${accountIds.length} accounts: ${accountIds.length > 20 ? `${accountIds.slice(0, 20).join(', ')}, …` : accountIds.join(', ')}\n`);
    const ids = await (await ctx.keyAdmin()).import(ctx.args[0]!, { allowDemo: ctx.options['allow-demo'] === true });
    // A large import names its first ids only: one readable line, not a megabyte.
    const shown = ids.length > 20 ? `${ids.slice(0, 20).join(', ')}, … and ${ids.length - 20} more` : ids.join(', ');
    ctx.out(`imported ${ids.length} keys: ${shown}\n`);
  },
};
