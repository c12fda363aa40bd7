import type { CommandContext } from './command';
import type { createRedisHolderStores } from '../../gateway/requests/holder-stores';

/** The holders' stores over the CLI's Redis connection (accounts, requests, sign-in links). */
export async function holderStores(ctx: CommandContext): Promise<ReturnType<typeof createRedisHolderStores>> {
  const stores = await import('../../gateway/requests/holder-stores');
  const { createKeyEventSink } = await import('../../gateway/webhooks/key-events');
  const redis = await ctx.redis();
  return stores.createRedisHolderStores(redis, await ctx.keyAdmin(), { events: createKeyEventSink(redis) });
}

/** A repeatable option (`--email A --email B`): every value given, in order. */
export function repeatedOption(ctx: CommandContext, name: string): string[] | undefined {
  const value = (ctx.options as Readonly<Record<string, unknown>>)[name];
  if (value === undefined) return undefined;
  return Array.isArray(value) ? value.map(String) : [String(value)];
}
