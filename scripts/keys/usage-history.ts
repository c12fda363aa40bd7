import type { UsageStore } from '../../gateway/usage/usage-model';
import { UsageError, type CommandContext } from './command';

type UsageCli = typeof import('../../gateway/usage/usage-cli');

/**
 * Prints what `render` makes of the usage history kept in Redis (`keys usage ID --days N`,
 * `keys report`). A mistake in the command's arguments is the command's usage error (one line and
 * its help hint). Loaded only by those commands.
 */
export async function printUsageHistory(ctx: CommandContext, command: string, render: (store: UsageStore, cli: UsageCli) => Promise<string>): Promise<void> {
  const [{ createRedisUsageStore }, cli] = await Promise.all([import('../../gateway/usage/redis-usage-store'), import('../../gateway/usage/usage-cli')]);
  try {
    ctx.out(await render(createRedisUsageStore(await ctx.redis()), cli));
  } catch (err) {
    if (err instanceof cli.UsageArgumentError) throw new UsageError(err.message, command);
    throw err;
  }
}
