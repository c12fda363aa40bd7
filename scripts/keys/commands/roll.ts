import { integerOption, printNewValue, UsageError, type Command } from '../command';

export const roll: Command = {
  name: 'roll',
  synopsis: 'ID --grace SECONDS',
  summary: 'gives a key a new value (printed once); the old one works for the grace period',
  options: { grace: { type: 'string', value: 'SECONDS', help: 'how long the old value keeps working (0 ends it now; at most 90 days)' } },
  positionals: [1, 1],
  async run(ctx) {
    // --grace is part of the command (docs/keys-and-accounts.md): a forgotten one must not end the old value at once.
    const grace = integerOption(ctx, 'grace');
    if (grace === undefined) throw new UsageError('roll needs --grace SECONDS (0 ends the old value now)', 'roll');
    const rolled = await (await ctx.keyAdmin()).roll(ctx.args[0]!, grace);
    printNewValue(ctx, `rolled key ${rolled.id}; the new value`, rolled.key);
  },
};
