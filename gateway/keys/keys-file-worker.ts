/**
 * Runs in a worker thread started by keys-file-loader.ts: reads and checks the keys file and sends
 * back the checked entries as one JSON text (the most compact thing to hand over: one string, parsed
 * once on the other side), then signals through the shared word so the waiting thread wakes up.
 * Whatever happens, the signal is given: the loader never waits for a worker that died.
 */
import { workerData, type MessagePort } from 'node:worker_threads';
import { ConfigError } from '../config/config-error';
import { readKeysFile } from './keys-file';

export interface WorkerInput {
  readonly file: string;
  readonly port: MessagePort;
  readonly signal: Int32Array;
}
export type WorkerOutput = { readonly ok: true; readonly entries: string } | { readonly ok: false; readonly configError: boolean; readonly message: string };

const { file, port, signal } = workerData as WorkerInput;
let output: WorkerOutput;
try {
  output = { ok: true, entries: JSON.stringify(readKeysFile(file)) };
} catch (err) {
  output = { ok: false, configError: err instanceof ConfigError, message: err instanceof Error ? err.message : String(err) };
}
port.postMessage(output);
Atomics.store(signal, 0, 1);
Atomics.notify(signal, 0);
