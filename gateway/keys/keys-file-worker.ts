/**
 * Runs as a child process started by keys-file-loader.ts (`node keys-file-worker.js <file>`):
 * reads and checks the whole keys file, then writes it to stdout as JSON lines: the checked entries
 * in their compact form (packKeyEntries), READER_CHUNK_ENTRIES entries a line, each line
 * complete in itself, and last a line saying it is whole (or only the error, when the file is
 * refused). The parse's garbage (the text, js-yaml's documents, the checked copies: some 400 MB for
 * 100,000 keys) lives and dies with this process; when it exits, its memory is the system's again
 * at once, which a worker thread's is not (V8 pools a finished isolate's pages for the process's
 * other isolates for several seconds).
 */
import { readFileSync } from 'node:fs';
import { ConfigError } from '../config/config-error';
import { packKeyEntries, type PackedKeyEntries } from './key-entry-pack';
import type { KeyEntry } from './key-entry';
import { readKeysFile } from './keys-file';

/**
 * Entries per line: the gateway parses and builds one line's records between two turns of its
 * event loop, a few milliseconds, so requests are answered while a large file comes in.
 */
export const READER_CHUNK_ENTRIES = 500;

/** One line of the reader's output. */
export type ReaderLine =
  | { readonly chunk: PackedKeyEntries }
  | { readonly ok: true; /** Entries written. */ readonly count: number; /** This process's peak RSS in kB (Linux), for the benchmark. */ readonly peakKb?: number }
  | { readonly ok: false; readonly configError: boolean; readonly message: string };

const peakKb = (): number | undefined => {
  try {
    const match = /VmHWM:\s+(\d+)/.exec(readFileSync('/proc/self/status', 'utf8'));
    return match ? Number(match[1]) : undefined;
  } catch {
    return undefined;
  }
};

const line = (value: ReaderLine): void => void process.stdout.write(`${JSON.stringify(value)}\n`);

function read(file: string): KeyEntry[] | undefined {
  try {
    return readKeysFile(file);
  } catch (err) {
    line({ ok: false, configError: err instanceof ConfigError, message: err instanceof Error ? err.message : String(err) });
    return undefined;
  }
}

// Every line is written before the process ends on its own (stdout is a pipe: written
// synchronously on Linux, and flushed before a natural exit elsewhere).
const entries = read(process.argv[2] ?? '');
if (entries) {
  const peak = peakKb();
  for (let start = 0; start < entries.length; start += READER_CHUNK_ENTRIES) {
    line({ chunk: packKeyEntries(entries.slice(start, start + READER_CHUNK_ENTRIES)) });
  }
  line({ ok: true, count: entries.length, ...(peak !== undefined ? { peakKb: peak } : {}) });
}
