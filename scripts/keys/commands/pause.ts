import { changeState, FILE_OPTION } from '../file-target';
import { printJson, stringOption, type Command } from '../command';

export const pause: Command = {
  name: 'pause',
  synopsis: 'ID --reason unpaid_renewal|payment_dispute|operator|leaked [--file FILE]',
  summary: 'pauses a key for a reason (its holder gets 403 key_paused until every reason is settled)',
  details:
    'A key holds a set of pause reasons and is paused while it holds one. Pausing adds --reason (operator: a pause with no payment reason); ' +
    'a reason the key already has changes nothing (no audit entry, no event). `keys account pause` pauses every key of an account.',
  options: { ...FILE_OPTION, reason: { type: 'string', value: 'REASON', help: 'unpaid_renewal, payment_dispute, operator or leaked' } },
  positionals: [1, 1],
  run(ctx) {
    const reason = stringOption(ctx, 'reason');
    return changeState(ctx, 'pause', async (admin, id) => printJson(ctx, await admin.pause(id, reason)), reason);
  },
};
