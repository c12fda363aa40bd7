import { printJson, stringOption, type Command } from '../command';

export const pause: Command = {
  name: 'pause',
  synopsis: 'ID --reason unpaid_renewal|payment_dispute',
  summary: 'pauses a key (its holder gets 403 key_paused until settled)',
  options: { reason: { type: 'string', value: 'REASON', help: 'unpaid_renewal or payment_dispute' } },
  positionals: [1, 1],
  async run(ctx) {
    printJson(ctx, await (await ctx.keyAdmin()).pause(ctx.args[0]!, stringOption(ctx, 'reason')));
  },
};
