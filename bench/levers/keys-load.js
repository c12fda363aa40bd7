// Keys-file lever: loads KEYS_FILE the way MODE says (in-thread: the reader the gateway used before;
// worker: the off-thread loader it uses now), builds the key store, waits 2 s (as a gateway would
// start serving), and prints one JSON line: start-up ms, RSS and peak RSS (VmHWM) in MB.
'use strict';
const { readFileSync } = require('node:fs');
const path = require('node:path');

const dist = path.join(__dirname, '..', '..', 'dist', 'gateway');
const { loadGatewayConfig } = require(path.join(dist, 'config', 'gateway-config.js'));
const { loadKeysFile } = require(path.join(dist, 'keys', 'keys-file.js'));
const { loadKeysFileOffThread } = require(path.join(dist, 'keys', 'keys-file-loader.js'));
const { createFileKeyStore } = require(path.join(dist, 'keys', 'file-key-store.js'));

const started = Date.now();
const config = loadGatewayConfig(process.env.GATEWAY_CONFIG);
const keys = process.env.MODE === 'worker' ? loadKeysFileOffThread(process.env.KEYS_FILE, config) : loadKeysFile(process.env.KEYS_FILE, config);
const store = createFileKeyStore(keys);
const ms = Date.now() - started;
const mb = (field) => Number(new RegExp(`${field}:\\s+(\\d+)`).exec(readFileSync('/proc/self/status', 'utf8'))[1]) / 1024;
setTimeout(() => {
  process.stdout.write(`${JSON.stringify({ keys: store.size, ms, rssMb: mb('VmRSS'), peakMb: mb('VmHWM') })}\n`);
}, 2000);
