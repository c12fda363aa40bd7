import { printJson, stringOption, type Command } from '../command';

export const usage: Command = {
  name: 'usage',
  synopsis: 'ID [--days N]',
  summary: "a key's current counters (minute, day, month) with their limits and reset times",
  details: 'With --days N: accepted and refused requests per UTC day, the last N days (today included), as a table.',
  options: { days: { type: 'string', value: 'N', help: 'the usage history of the last N UTC days instead of the counters' } },
  positionals: [1, 1],
  async run(ctx) {
    const admin = await ctx.keyAdmin();
    const id = ctx.args[0]!;
    const days = stringOption(ctx, 'days');
    if (days === undefined) return printJson(ctx, await admin.usage(id));
    await admin.show(id); // an unknown id is an error, not an empty table
    const { printUsageHistory } = await import('../usage-history');
    await printUsageHistory(ctx, 'usage', (store, cli) => cli.usageTable(store, id, days));
  },
};
