import { spawn } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { setPriority } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import type { GatewayConfig } from '../config/gateway-config';
import { ConfigError } from '../config/config-error';
import { nextTurn } from '../slices';
import { fromPackedKeyEntries } from './key-entry-pack';
import type { FileKey } from './key-record-build';
import { loadKeysFile } from './keys-file';
import type { ReaderLine } from './keys-file-worker';

/** Longest wait for the reader process; a keys file of 100,000 keys is read in about a second. */
const READER_TIMEOUT_MS = 120_000;
const WORKER_SCRIPT = path.join(__dirname, 'keys-file-worker.js');
/**
 * The reader's niceness: on a busy machine the requests come first (10: about a ninth of the CPU
 * share of the serving process). Not 19: that starved the read behind any other busy process on
 * the machine, for no better latency. Beside two busy loops on 2 cores, a 100,000-key reload took
 * 48 s at 19 (p99 of pings during it 37 ms) and 22 s at 10 (43 ms); in a whole test run beside
 * them, over 4 minutes at 19.
 */
const READER_PRIORITY = 10;
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

/** What the last off-thread read measured (for the benchmark and tests). */
export interface KeysFileReadStats {
  /** The reader process's peak RSS in kB, where /proc tells it. */
  readerPeakKb?: number;
  /** Lines of records received from the reader (each built between two turns of the event loop). */
  chunks?: number;
}

/** What the reader process said, line by line, turned into records. */
interface Received {
  readonly keys: FileKey[];
  status?: Exclude<ReaderLine, { chunk: unknown }>;
  malformed: boolean;
  chunks: number;
}

/**
 * The reader's output, a line at a time: each line of records is parsed and built, then the event
 * loop gets a turn as long (slices.ts): requests are answered while a large file comes in. Resolves
 * once the process has closed its output and every line is handled.
 */
function receive(child: ReturnType<typeof spawn>, config: GatewayConfig): Promise<Received> {
  const received: Received = { keys: [], malformed: false, chunks: 0 };
  let work = Promise.resolve();
  const handle = (text: string): void => {
    let line: ReaderLine;
    try {
      line = JSON.parse(text) as ReaderLine;
    } catch {
      received.malformed = true;
      return;
    }
    if ('chunk' in line) {
      for (const key of fromPackedKeyEntries(line.chunk, config)) received.keys.push(key);
      received.chunks++;
    } else {
      received.status = line;
    }
  };
  let buffered = '';
  child.stdout!.setEncoding('utf8');
  child.stdout!.on('data', (data: string) => {
    buffered += data;
    let nl: number;
    while ((nl = buffered.indexOf('\n')) >= 0) {
      const text = buffered.slice(0, nl);
      buffered = buffered.slice(nl + 1);
      work = work.then(() => {
        const started = performance.now();
        handle(text);
        return nextTurn(performance.now() - started);
      });
    }
  });
  return new Promise((resolve) => {
    const done = (): void => void work.then(() => resolve(received));
    child.once('close', done);
    // No process was started: no 'close' may follow.
    child.once('error', () => {
      if (!child.pid) done();
    });
  });
}

/**
 * The keys file as the records the gateway uses, read and checked in a child process while this
 * thread keeps serving. Reading a large YAML file builds a large, short-lived object graph (the
 * text, the parser's documents, the checked copies): on the main thread V8 grew its heap for it and
 * kept the pages, ~360 MB of RSS for 100,000 keys, and every request waited for the read. A worker
 * thread did not help the memory on current Node: when the worker ends, V8 pools its pages for the
 * process's other isolates (and releases them seconds later at best), ~420 MB. In a child process
 * the garbage goes with the process. It answers, once the whole file is checked, with JSON lines,
 * the checked entries in a compact form (each distinct tier/countries/addresses/status/limits once
 * a line, then three values per entry), from which this thread builds the records a line at a
 * time, between requests.
 *
 * Same errors as the in-thread reader: a `ConfigError` in the reader is rejected here with the same
 * one line. A small file (WORKER_FROM_BYTES), or one read where the compiled reader is not there
 * (the TypeScript sources run directly, as in unit tests), is read in this thread. The reader runs
 * with this process's Node and environment, less NODE_OPTIONS (a --require or --inspect there is
 * this process's own).
 */
export async function readKeysFileOffThread(file: string, config: GatewayConfig, workerFromBytes = WORKER_FROM_BYTES, stats?: KeysFileReadStats): Promise<FileKey[]> {
  if (!existsSync(WORKER_SCRIPT) || fileSize(file) < workerFromBytes) return loadKeysFile(file, config);
  const env = { ...process.env };
  delete env.NODE_OPTIONS;
  const child = spawn(process.execPath, [WORKER_SCRIPT, file], { env, stdio: ['ignore', 'pipe', 'ignore'], windowsHide: true });
  // Background work: the serving thread comes first when the CPUs are busy.
  if (child.pid !== undefined) {
    try {
      setPriority(child.pid, READER_PRIORITY);
    } catch {
      // not allowed here: it runs at this process's priority
    }
  }
  let spawnError: Error | undefined;
  child.once('error', (err) => {
    spawnError = err;
  });
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    child.kill('SIGKILL');
  }, READER_TIMEOUT_MS);
  const received = await receive(child, config);
  clearTimeout(timer);
  if (timedOut) throw new ConfigError(`${file}: the keys file could not be read within ${READER_TIMEOUT_MS / 1000} s`);
  // No process could be started (no pid: e.g. EAGAIN at the process limit): read it here, as before.
  if (spawnError && !child.pid) return loadKeysFile(file, config);
  const { status } = received;
  if (status && !status.ok) throw status.configError ? new ConfigError(status.message) : new Error(status.message);
  if (!status || received.malformed || status.count !== received.keys.length) {
    const how = spawnError ? spawnError.message : child.signalCode ? `signal ${child.signalCode}` : `exit code ${child.exitCode}`;
    // A ConfigError, like the timeout above: start-up stops with this one line, not a stack trace.
    throw new ConfigError(`${file}: the keys file reader process gave no answer (${how})`);
  }
  if (stats) {
    if (status.peakKb !== undefined) stats.readerPeakKb = status.peakKb;
    stats.chunks = received.chunks;
  }
  return received.keys;
}
