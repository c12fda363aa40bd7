/**
 * The keys CLI's entry point (compiled to dist/scripts/keys-cli.js; `scripts/keys.js` runs it,
 * rebuilding first only when a source changed). The commands live in scripts/keys/commands/.
 */
import { fieldSafe } from '../gateway/output/safe-text';
import { failureLine, main } from './keys/cli';

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    // One line, whatever the failure quotes (an id, a file's content): the terminal rule of gateway/output/.
    process.stderr.write(`${fieldSafe(failureLine(err))}\n`);
    process.exitCode = 1;
  },
);
