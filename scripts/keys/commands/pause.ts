import { changeState, FILE_OPTION } from '../file-target';
import { printJson, stringOption, type Command } from '../command';

export const pause: Command = {
  name: 'pause',
  synopsis: 'ID --reason unpaid_renewal|payment_dispute [--file FILE]',
  summary: 'pauses a key (its holder gets 403 key_paused until settled)',
  options: { ...FILE_OPTION, reason: { type: 'string', value: 'REASON', help: 'unpaid_renewal or payment_dispute' } },
  positionals: [1, 1],
  run(ctx) {
    const reason = stringOption(ctx, 'reason');
    return changeState(ctx, 'pause', async (admin, id) => printJson(ctx, await admin.pause(id, reason)), reason);
  },
};
