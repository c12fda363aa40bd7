import { PAGE } from '../../../gateway/http/page-bound';
import { integerOption, printJson, stringOption, type Command } from '../command';

export const list: Command = {
  name: 'list',
  synopsis: '[--limit N [--cursor CURSOR]]',
  summary: 'the key records (never a hash or a value)',
  details:
    'Without --limit: every record, as one JSON array, read page by page (1,000 at a time).\n' +
    `With --limit N (${PAGE.min}..${PAGE.max}): one page, as {"keys": [...], "next_cursor"}; pass next_cursor back with --cursor for the next (null on the last page).`,
  options: {
    limit: { type: 'string', value: 'N', help: `records per page, ${PAGE.min}..${PAGE.max}` },
    cursor: { type: 'string', value: 'CURSOR', help: 'next_cursor of the previous page' },
  },
  async run(ctx) {
    const admin = await ctx.keyAdmin();
    const limit = integerOption(ctx, 'limit');
    const cursor = stringOption(ctx, 'cursor');
    if (limit !== undefined || cursor !== undefined) return printJson(ctx, await admin.list({ ...(limit !== undefined ? { limit } : {}), ...(cursor !== undefined ? { cursor } : {}) }));
    // Streamed page by page, so a store of any size is printed in bounded memory.
    let next: string | undefined;
    let first = true;
    ctx.out('[');
    do {
      const page = await admin.list({ limit: PAGE.max, ...(next !== undefined ? { cursor: next } : {}) });
      for (const key of page.keys) {
        ctx.out(`${first ? '\n' : ',\n'}${JSON.stringify(key, null, 2).replace(/^/gm, '  ')}`);
        first = false;
      }
      next = page.next_cursor ?? undefined;
    } while (next !== undefined);
    ctx.out(first ? ']\n' : '\n]\n');
  },
};
