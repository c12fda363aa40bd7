/**
 * The keys CLI's failure line (docs/keys-and-accounts.md: exit 1 with one clear line on stderr): a mistake
 * keeps its words and the command's help hint; anything unexpected is named so, by the first line
 * of its message, never with a stack trace.
 */
import { failureLine } from '../../scripts/keys/cli';
import { UsageError } from '../../scripts/keys/command';
import { ApiError } from '../../gateway/errors';

describe('keys CLI failure line', () => {
  it('an unexpected error is one line: its first message line, no stack', () => {
    const err = new Error('Connection is closed.\nsecond line of detail');
    const line = failureLine(err);
    expect(line).toBe('keys: unexpected failure: Connection is closed.');
    expect(line).not.toContain('\n');
    expect(line).not.toMatch(/\bat .+:\d+:\d+/);
  });

  it('a usage mistake keeps its words and names the help of its command; a store refusal keeps its words', () => {
    expect(failureLine(new UsageError('roll needs --grace SECONDS', 'roll'))).toBe('keys: roll needs --grace SECONDS (keys help roll)');
    expect(failureLine(new ApiError('not_found', {}, undefined, 'No key with id "x".'))).toBe('keys: No key with id "x".');
  });
});
