import { printJson, UsageError, type Command } from '../command';

export const webhooks: Command = {
  name: 'webhooks',
  synopsis: 'dead | resend ID',
  summary: 'webhook events that gave up (dead); send one again (resend ID)',
  positionals: [1, 2],
  async run(ctx) {
    const [action, id] = ctx.args;
    // The command line is checked before Redis is opened: a mistake in it is named as such.
    if (action === 'dead' && id !== undefined) throw new UsageError(`webhooks dead: unexpected argument "${id}"`, 'webhooks');
    if (action === 'resend' && !id) throw new UsageError('webhooks resend needs an event id (see webhooks dead)', 'webhooks');
    if (action !== 'dead' && action !== 'resend') throw new UsageError('webhooks takes dead or resend ID', 'webhooks');
    const { redisDeadLetters } = await import('../../../gateway/webhooks/redis-webhook-queue');
    const dead = redisDeadLetters(await ctx.redis());
    if (action === 'dead') {
      // Every letter, a page at a time (the CLI is not the serving process; Redis reads stay bounded).
      const all: unknown[] = [];
      let cursor: string | undefined;
      do {
        const page = await dead.deadLetterPage({ limit: 1000, ...(cursor !== undefined ? { cursor } : {}) });
        all.push(...page.events);
        cursor = page.next_cursor ?? undefined;
      } while (cursor !== undefined);
      return printJson(ctx, all);
    }
    if (!(await dead.resend(id!))) throw new UsageError(`no dead letter with id "${id}"`);
    ctx.out(`queued ${id} again\n`);
  },
};
