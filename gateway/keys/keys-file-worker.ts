/**
 * Runs in a worker thread started by keys-file-loader.ts: reads and checks the keys file, then hands
 * the checked entries over in batches, each as one JSON text (one string, parsed once on the other
 * side), waiting for the loader to take each before sending the next, so the loader's thread never
 * holds more than one batch of garbage. A shared word carries the turns: 1 = a message is waiting
 * (set here), 0 = taken (set by the loader). Whatever happens, a message and the signal are given:
 * the loader never waits for a worker that died.
 */
import { workerData, type MessagePort } from 'node:worker_threads';
import { ConfigError } from '../config/config-error';
import { readKeysFile, type KeyEntry } from './keys-file';

export interface WorkerInput {
  readonly file: string;
  readonly port: MessagePort;
  readonly signal: Int32Array;
}
export type WorkerOutput =
  | { readonly ok: true; readonly entries: string; readonly last: boolean }
  | { readonly ok: false; readonly configError: boolean; readonly message: string };

/** Entries per message: small enough that a batch's garbage is nothing, large enough that the turns cost nothing. */
const BATCH = 5000;
/** The loader takes a batch within this long, or has given up. */
const TURN_TIMEOUT_MS = 120_000;

const { file, port, signal } = workerData as WorkerInput;

function hand(output: WorkerOutput): boolean {
  port.postMessage(output);
  Atomics.store(signal, 0, 1);
  Atomics.notify(signal, 0);
  return Atomics.wait(signal, 0, 1, TURN_TIMEOUT_MS) !== 'timed-out';
}

let entries: KeyEntry[] | undefined;
try {
  entries = readKeysFile(file);
} catch (err) {
  hand({ ok: false, configError: err instanceof ConfigError, message: err instanceof Error ? err.message : String(err) });
}
if (entries) {
  for (let start = 0; ; start += BATCH) {
    const last = start + BATCH >= entries.length;
    if (!hand({ ok: true, entries: JSON.stringify(entries.slice(start, start + BATCH)), last }) || last) break;
  }
}
port.close();
