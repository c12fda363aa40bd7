import { generateKeyValue, sha256Hex } from '../gateway/keys/key-format';

/**
 * `npm run --silent keys -- <command>`.
 *   generate   a new key value (prefix plk_, checksum) and its SHA-256, for a keys file entry
 *   hash       the SHA-256 of a key value read from stdin (an existing key you import)
 */
function main(argv: string[]): number {
  const [command] = argv;
  switch (command) {
    case 'generate': {
      const value = generateKeyValue();
      process.stdout.write(`key_sha256: ${sha256Hex(value)}\n${value}\n`);
      return 0;
    }
    case 'hash': {
      const chunks: Buffer[] = [];
      process.stdin.on('data', (c: Buffer) => chunks.push(c));
      process.stdin.on('end', () => {
        const value = Buffer.concat(chunks).toString('utf8').replace(/\r?\n$/, '');
        if (!value) {
          process.stderr.write('keys hash: no key value on stdin\n');
          process.exitCode = 1;
          return;
        }
        process.stdout.write(`${sha256Hex(value)}\n`);
      });
      return 0;
    }
    default:
      process.stderr.write(`keys: unknown command "${command ?? ''}" (commands: generate, hash)\n`);
      return 1;
  }
}

process.exitCode = main(process.argv.slice(2));
