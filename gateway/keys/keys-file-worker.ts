/**
 * Runs as a child process started by keys-file-loader.ts (`node keys-file-worker.js <file>`):
 * reads and checks the keys file, then writes one JSON line to stdout, the checked entries in
 * their compact form (packKeyEntries) or the error. The parse's garbage (the text, js-yaml's
 * documents, the checked copies: some 400 MB for 100,000 keys) lives and dies with this process;
 * when it exits, its memory is the system's again at once, which a worker thread's is not (V8 pools
 * a finished isolate's pages for the process's other isolates for several seconds).
 */
import { readFileSync } from 'node:fs';
import { ConfigError } from '../config/config-error';
import { packKeyEntries, type PackedKeyEntries } from './key-entry-pack';
import { readKeysFile } from './keys-file';

export type ReaderOutput =
  | ({ readonly ok: true; /** This process's peak RSS in kB (Linux), for the benchmark. */ readonly peakKb?: number } & PackedKeyEntries)
  | { readonly ok: false; readonly configError: boolean; readonly message: string };

const peakKb = (): number | undefined => {
  try {
    const match = /VmHWM:\s+(\d+)/.exec(readFileSync('/proc/self/status', 'utf8'));
    return match ? Number(match[1]) : undefined;
  } catch {
    return undefined;
  }
};

function read(file: string): ReaderOutput {
  try {
    const packed = packKeyEntries(readKeysFile(file));
    const peak = peakKb();
    return { ok: true, ...packed, ...(peak !== undefined ? { peakKb: peak } : {}) };
  } catch (err) {
    return { ok: false, configError: err instanceof ConfigError, message: err instanceof Error ? err.message : String(err) };
  }
}

// Written whole before the process ends on its own (stdout is a pipe: written synchronously on Linux,
// and flushed before a natural exit elsewhere).
process.stdout.write(`${JSON.stringify(read(process.argv[2] ?? ''))}\n`);
