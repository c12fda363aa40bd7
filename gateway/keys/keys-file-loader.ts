import { spawnSync } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import path from 'node:path';
import type { GatewayConfig } from '../config/gateway-config';
import { ConfigError } from '../config/config-error';
import { fromPackedKeyEntries } from './key-entry-pack';
import type { FileKey } from './key-record-build';
import { loadKeysFile } from './keys-file';
import type { ReaderOutput } from './keys-file-worker';

/** Longest wait for the reader process; a keys file of 100,000 keys is read in about a second. */
const READER_TIMEOUT_MS = 120_000;
const WORKER_SCRIPT = path.join(__dirname, 'keys-file-worker.js');
/**
 * Files smaller than this (about 4,000 keys) are read in this thread: their parse garbage is a few
 * MB, and the reader process costs its own start (a second copy of the modules) on every start-up and reload.
 */
export const WORKER_FROM_BYTES = 1024 * 1024;

const fileSize = (file: string): number => {
  try {
    return statSync(file).size;
  } catch {
    return 0; // the reader names the problem
  }
};

/** What the last off-thread read measured (for the benchmark). */
export interface KeysFileReadStats {
  /** The reader process's peak RSS in kB, where /proc tells it. */
  readerPeakKb?: number;
}

/**
 * The keys file as the records the gateway uses, read in a child process. Reading a large YAML file
 * builds a large, short-lived object graph (the text, the parser's documents, the checked copies):
 * on the main thread V8 grew its heap for it and kept the pages, ~360 MB of RSS for 100,000 keys.
 * A worker thread did not help on current Node: when the worker ends, V8 pools its pages for the
 * process's other isolates (and releases them seconds later at best), ~420 MB. In a child process
 * the garbage goes with the process. It answers with one JSON text, the checked entries in a
 * compact form (each distinct tier/countries/addresses/status/limits once, then three values per
 * entry), from which this thread builds the records in one pass, little garbage of its own.
 *
 * Synchronous like the in-thread reader it replaces (start-up and reload wait for the keys anyway).
 * Same errors: a `ConfigError` in the reader is rethrown here with the same one line. A small file
 * (WORKER_FROM_BYTES), or one read where the compiled reader is not there (the TypeScript sources
 * run directly, as in unit tests), is read in this thread. The reader runs with this process's
 * Node and environment, less NODE_OPTIONS (a --require or --inspect there is this process's own).
 */
export function loadKeysFileOffThread(file: string, config: GatewayConfig, workerFromBytes = WORKER_FROM_BYTES, stats?: KeysFileReadStats): FileKey[] {
  if (!existsSync(WORKER_SCRIPT) || fileSize(file) < workerFromBytes) return loadKeysFile(file, config);
  const env = { ...process.env };
  delete env.NODE_OPTIONS;
  const child = spawnSync(process.execPath, [WORKER_SCRIPT, file], {
    env,
    stdio: ['ignore', 'pipe', 'ignore'],
    timeout: READER_TIMEOUT_MS,
    maxBuffer: Number.MAX_SAFE_INTEGER,
    encoding: 'utf8',
    windowsHide: true,
  });
  if ((child.error as NodeJS.ErrnoException | undefined)?.code === 'ETIMEDOUT') {
    throw new ConfigError(`${file}: the keys file could not be read within ${READER_TIMEOUT_MS / 1000} s`);
  }
  // No process could be started (no pid: e.g. EAGAIN at the process limit): read it here, as before.
  if (child.error && !child.pid) return loadKeysFile(file, config);
  let output: ReaderOutput | undefined;
  try {
    output = JSON.parse(child.stdout) as ReaderOutput | undefined;
  } catch {
    // handled below
  }
  if (typeof output !== 'object' || output === null) {
    const how = child.error ? child.error.message : child.signal ? `signal ${child.signal}` : `exit code ${child.status}`;
    // A ConfigError, like the timeout above: start-up stops with this one line, not a stack trace.
    throw new ConfigError(`${file}: the keys file reader process gave no answer (${how})`);
  }
  if (!output.ok) throw output.configError ? new ConfigError(output.message) : new Error(output.message);
  if (stats) stats.readerPeakKb = output.peakKb;
  return fromPackedKeyEntries(output, config);
}
