import { changeState, FILE_OPTION } from '../file-target';
import { printJson, stringOption, type Command } from '../command';

export const settle: Command = {
  name: 'settle',
  synopsis: 'ID [--reason payment_dispute|unpaid_renewal|operator] [--file FILE]',
  summary: 'settles a pause reason of a key (it resumes when none is left)',
  details:
    'With --reason, removes that reason; without, removes every reason but leaked (an operator\'s override). ' +
    'A key paused because its value leaked is cleared only by `keys roll`: settling leaked, or settling a leaked key without --reason, is refused. ' +
    'A reason the key does not have changes nothing. `keys account settle` settles every key of an account.',
  options: { ...FILE_OPTION, reason: { type: 'string', value: 'REASON', help: 'the reason to settle: unpaid_renewal, payment_dispute or operator (default: all but leaked)' } },
  positionals: [1, 1],
  run(ctx) {
    const reason = stringOption(ctx, 'reason');
    return changeState(ctx, 'settle', async (admin, id) => printJson(ctx, await admin.settle(id, reason)), reason);
  },
};
