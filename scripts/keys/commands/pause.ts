import { FILE_OPTION, keysFileTarget } from '../file-target';
import { printJson, stringOption, type Command } from '../command';

export const pause: Command = {
  name: 'pause',
  synopsis: 'ID --reason unpaid_renewal|payment_dispute [--file FILE]',
  summary: 'pauses a key (its holder gets 403 key_paused until settled)',
  options: { ...FILE_OPTION, reason: { type: 'string', value: 'REASON', help: 'unpaid_renewal or payment_dispute' } },
  positionals: [1, 1],
  async run(ctx) {
    const file = await keysFileTarget(ctx.options);
    if (file !== undefined) return (await import('../file-commands')).editState(ctx, file, 'pause', stringOption(ctx, 'reason'));
    printJson(ctx, await (await ctx.keyAdmin()).pause(ctx.args[0]!, stringOption(ctx, 'reason')));
  },
};
