import { printJson, UsageError, type Command } from '../command';

export const webhooks: Command = {
  name: 'webhooks',
  synopsis: 'dead | resend ID',
  summary: 'webhook events that gave up (dead); send one again (resend ID)',
  positionals: [1, 2],
  async run(ctx) {
    const { redisDeadLetters } = await import('../../../gateway/webhooks/redis-webhook-queue');
    const dead = redisDeadLetters(await ctx.redis());
    const [action, id] = ctx.args;
    if (action === 'dead') return printJson(ctx, await dead.deadLetters());
    if (action === 'resend') {
      if (!id) throw new UsageError('webhooks resend needs an event id (see webhooks dead)', 'webhooks');
      if (!(await dead.resend(id))) throw new UsageError(`no dead letter with id "${id}"`);
      ctx.out(`queued ${id} again\n`);
      return;
    }
    throw new UsageError('webhooks takes dead or resend ID', 'webhooks');
  },
};
