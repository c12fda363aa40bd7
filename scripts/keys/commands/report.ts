import { stringOption, type Command } from '../command';

export const report: Command = {
  name: 'report',
  synopsis: '--month YYYY-MM [--csv]',
  summary: "every key's usage totals for a UTC month (the billing export)",
  options: {
    month: { type: 'string', value: 'YYYY-MM', help: 'the UTC month' },
    csv: { type: 'boolean', help: 'CSV with a header row instead of a table' },
  },
  async run(ctx) {
    const { printUsageHistory } = await import('../usage-history');
    await printUsageHistory(ctx, 'report', (store, cli) => cli.monthReport(store, stringOption(ctx, 'month'), ctx.options.csv === true));
  },
};
