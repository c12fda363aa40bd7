import { printJson, stringOption, type Command } from '../command';

export const audit: Command = {
  name: 'audit',
  synopsis: '[ID] [--since DATE|DATETIME] [--limit N] [--cursor C] [--json]',
  summary: 'the audit log, newest first (who changed what, before → after)',
  options: {
    since: { type: 'string', value: 'DATE|DATETIME', help: 'entries from then on' },
    limit: { type: 'string', value: 'N', help: 'entries per page' },
    cursor: { type: 'string', value: 'C', help: 'the next page, as printed after the previous one' },
    json: { type: 'boolean', help: 'the page as JSON' },
  },
  positionals: [0, 1],
  async run(ctx) {
    const [{ parseAuditQuery }, { formatEntryLine }] = await Promise.all([import('../../../gateway/audit/audit-query'), import('../../../gateway/audit/format-entry')]);
    const params = new URLSearchParams();
    if (ctx.args[0]) params.set('key_id', ctx.args[0]);
    for (const name of ['since', 'limit', 'cursor'] as const) {
      const value = stringOption(ctx, name);
      if (value !== undefined) params.set(name, value);
    }
    const page = await (await ctx.keyAdmin()).readAudit(parseAuditQuery(params));
    if (ctx.options.json === true) return printJson(ctx, page);
    for (const entry of page.entries) ctx.out(`${formatEntryLine(entry)}\n`);
    if (page.next_cursor) ctx.out(`(older entries: --cursor ${page.next_cursor})\n`);
  },
};
