// The floor for one HTTP answer in Node: a bare node:http server answering the same page bytes the
// gateway answers, from memory (PAGE_FILE), with the same content type. No policies, no upstream,
// no logging: whatever the gateway costs above this is the price of proxying and of its rules.
'use strict';
const http = require('node:http');
const { readFileSync } = require('node:fs');

const page = readFileSync(process.env.PAGE_FILE);
const headers = { 'content-type': 'application/json; charset=utf-8', 'content-length': String(page.length) };
const server = http.createServer((_req, res) => {
  res.writeHead(200, headers);
  res.end(page);
});
server.keepAliveTimeout = 65_000;
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`${JSON.stringify({ msg: 'listening', port: server.address().port })}\n`);
});
process.on('SIGTERM', () => {
  server.close(() => process.exit(0));
  server.closeAllConnections();
});
