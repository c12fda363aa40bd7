import { stringOption, UsageError, type Command } from '../command';

export const report: Command = {
  name: 'report',
  synopsis: '--month YYYY-MM [--csv]',
  summary: "every key's usage totals for a UTC month (the billing export)",
  options: {
    month: { type: 'string', value: 'YYYY-MM', help: 'the UTC month' },
    csv: { type: 'boolean', help: 'CSV with a header row instead of a table' },
  },
  async run(ctx) {
    const [{ createRedisUsageStore }, { monthReport, UsageArgumentError }] = await Promise.all([import('../../../gateway/usage/redis-usage-store'), import('../../../gateway/usage/usage-cli')]);
    try {
      ctx.out(await monthReport(createRedisUsageStore(await ctx.redis()), stringOption(ctx, 'month'), ctx.options.csv === true));
    } catch (err) {
      if (err instanceof UsageArgumentError) throw new UsageError(err.message, 'report');
      throw err;
    }
  },
};
