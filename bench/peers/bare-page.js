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
require('../levers/common').listen(server);
