/**
 * The keys CLI's entry point (compiled to dist/scripts/keys-cli.js; `scripts/keys.js` runs it,
 * rebuilding first only when a source changed). The commands live in scripts/keys/commands/.
 */
import { failureLine, main } from './keys/cli';

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`${failureLine(err)}\n`);
    process.exitCode = 1;
  },
);
