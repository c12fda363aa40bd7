// Keys-file lever: loads KEYS_FILE the way MODE says (thread: the in-thread reader, js-yaml in the
// main thread; worker: the loader the gateway uses, js-yaml in a child process that hands the checked
// entries back packed), builds the key store, waits 2 s (as a gateway would start serving), and
// prints one JSON line: start-up ms, RSS and peak RSS (VmHWM) in MB, and for the loader the reader
// process's own peak (readerPeakMb: another process, not in this one's VmHWM).
'use strict';
const { readFileSync } = require('node:fs');
const path = require('node:path');

const dist = path.join(__dirname, '..', '..', 'dist', 'gateway');
const { loadGatewayConfig } = require(path.join(dist, 'config', 'gateway-config.js'));
const { loadKeysFile } = require(path.join(dist, 'keys', 'keys-file.js'));
const { readKeysFileOffThread, WORKER_FROM_BYTES } = require(path.join(dist, 'keys', 'keys-file-loader.js'));
const { createFileKeyStore } = require(path.join(dist, 'keys', 'file-key-store.js'));

async function main() {
  const started = Date.now();
  const config = loadGatewayConfig(process.env.GATEWAY_CONFIG);
  const stats = {};
  const keys = process.env.MODE === 'worker' ? await readKeysFileOffThread(process.env.KEYS_FILE, config, WORKER_FROM_BYTES, stats) : loadKeysFile(process.env.KEYS_FILE, config);
  const store = createFileKeyStore(keys);
  const count = keys.length; // the entries, not the array, are kept: the store holds what a gateway holds
  const ms = Date.now() - started;
  const mb = (field) => Number(new RegExp(`${field}:\\s+(\\d+)`).exec(readFileSync('/proc/self/status', 'utf8'))[1]) / 1024;
  setTimeout(() => {
    const reader = stats.readerPeakKb !== undefined ? { readerPeakMb: stats.readerPeakKb / 1024 } : {};
    if (store.lookup('') === undefined) throw new Error('no store'); // held until RSS is read
    process.stdout.write(`${JSON.stringify({ keys: count, ms, rssMb: mb('VmRSS'), peakMb: mb('VmHWM'), ...reader })}\n`);
  }, 2000);
}
void main();
