import { generateKeyValue, sha256Hex } from '../../../gateway/keys/key-format';
import type { Command } from '../command';

export const generate: Command = {
  name: 'generate',
  synopsis: '',
  summary: 'a new key value and its hash, for a keys file (no store needed)',
  details: 'Prints "key_sha256: <hash>", then the value alone on the last line.',
  async run(ctx) {
    const value = generateKeyValue();
    ctx.out(`key_sha256: ${sha256Hex(value)}\n${value}\n`);
  },
};
