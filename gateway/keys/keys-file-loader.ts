import { existsSync, statSync } from 'node:fs';
import path from 'node:path';
import { MessageChannel, receiveMessageOnPort, Worker } from 'node:worker_threads';
import type { GatewayConfig } from '../config/gateway-config';
import { ConfigError } from '../config/config-error';
import { loadKeysFile, sharedRecordParts, toFileKeys, type FileKey, type KeyEntry } from './keys-file';
import type { WorkerInput, WorkerOutput } from './keys-file-worker';

/** Longest wait for the worker's next message; a keys file of 100,000 keys is read in about a second. */
const WORKER_TIMEOUT_MS = 120_000;
const WORKER_SCRIPT = path.join(__dirname, 'keys-file-worker.js');
/**
 * Files smaller than this (about 4,000 keys) are read in this thread: their parse garbage is a few
 * MB, and a worker costs its own start (a second copy of the modules) on every start-up and reload.
 */
export const WORKER_FROM_BYTES = 1024 * 1024;

const fileSize = (file: string): number => {
  try {
    return statSync(file).size;
  } catch {
    return 0; // the reader names the problem
  }
};

/**
 * The keys file as the records the gateway uses, read in a worker thread. Reading a large YAML file
 * builds a large, short-lived object graph (the text, the parser's documents, the checked copies):
 * on the main thread V8 grew its heap for it and kept the pages, 333 MB of RSS for 100,000 keys.
 * In a worker that heap is the worker's, and it is released whole when the worker ends; the main
 * thread receives only the checked entries, in batches of JSON text (keys-file-worker.ts), and
 * builds the records batch by batch, so its own heap holds the records and one batch at most.
 *
 * Synchronous like the in-thread reader it replaces (start-up and reload wait for the keys anyway):
 * the thread blocks on a shared word the worker sets when it has posted its answer, which is then
 * taken from the port without the event loop. Same errors: a `ConfigError` in the worker is
 * rethrown here with the same one line. A small file (WORKER_FROM_BYTES), or one read where the
 * compiled worker is not there (the TypeScript sources run directly, as in unit tests), is read in
 * this thread.
 */
export function loadKeysFileOffThread(file: string, config: GatewayConfig, workerFromBytes = WORKER_FROM_BYTES): FileKey[] {
  if (!existsSync(WORKER_SCRIPT) || fileSize(file) < workerFromBytes) return loadKeysFile(file, config);
  const { port1, port2 } = new MessageChannel();
  const signal = new Int32Array(new SharedArrayBuffer(4));
  const input: WorkerInput = { file, port: port2, signal };
  const worker = new Worker(WORKER_SCRIPT, { workerData: input, transferList: [port2], stdout: false, stderr: false });
  const shared = sharedRecordParts();
  const keys: FileKey[] = [];
  try {
    for (;;) {
      const woke = Atomics.wait(signal, 0, 0, WORKER_TIMEOUT_MS);
      const message = receiveMessageOnPort(port1);
      if (woke === 'timed-out' || !message) throw new ConfigError(`${file}: the keys file could not be read within ${WORKER_TIMEOUT_MS / 1000} s`);
      const output = message.message as WorkerOutput;
      if (!output.ok) throw output.configError ? new ConfigError(output.message) : new Error(output.message);
      for (const key of toFileKeys(JSON.parse(output.entries) as KeyEntry[], config, shared)) keys.push(key);
      if (output.last) return keys;
      Atomics.store(signal, 0, 0); // taken: the worker may send the next batch
      Atomics.notify(signal, 0);
    }
  } finally {
    port1.close();
    void worker.terminate();
  }
}
