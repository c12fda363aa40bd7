import type { Command } from '../command';

export const validate: Command = {
  name: 'validate',
  synopsis: 'FILE',
  summary: 'checks a YAML keys file exactly as the gateway loads it (no store needed)',
  details: 'Prints a one-line summary and exits 0 when the file is valid; otherwise the one line the gateway would refuse it with, and exit 1.',
  positionals: [1, 1],
  async run(ctx) {
    const { readKeysFile } = await import('../../../gateway/keys/keys-file');
    const file = ctx.args[0]!;
    const entries = readKeysFile(file);
    // Its `accounts:` list and the keys' `account` fields, as the gateway checks them at start-up.
    const { readKeysFileAccounts } = await import('../../../gateway/accounts/keys-file-accounts');
    const accounts = readKeysFileAccounts(file).accounts.length;
    const byStatus = new Map<string, number>();
    for (const e of entries) byStatus.set(e.status, (byStatus.get(e.status) ?? 0) + 1);
    const now = Date.now();
    const expired = entries.filter((e) => e.expires_at !== undefined && Date.parse(e.expires_at) <= now).length;
    const counts = [...byStatus].map(([status, n]) => `${n} ${status}`).join(', ');
    ctx.out(`${file}: valid, ${entries.length} key${entries.length === 1 ? '' : 's'}${entries.length ? ` (${counts}${expired ? `; ${expired} past expires_at` : ''})` : ''}${accounts ? `, ${accounts} account${accounts === 1 ? '' : 's'}` : ''}\n`);
  },
};
