import { sha256Hex } from '../../../gateway/keys/key-format';
import { UsageError, type Command } from '../command';

export const hash: Command = {
  name: 'hash',
  synopsis: '',
  summary: 'the SHA-256 of a key value read from stdin (no store needed)',
  details: "For keys already issued elsewhere: printf %s 'the-value' | keys hash",
  async run(ctx) {
    const value = (await ctx.stdin()).replace(/\r?\n$/, '');
    if (!value) throw new UsageError('hash: no key value on stdin', 'hash');
    ctx.out(`${sha256Hex(value)}\n`);
  },
};
