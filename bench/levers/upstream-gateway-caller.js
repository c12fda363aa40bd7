// Upstream lever "answer handling", after: the same call through the gateway's own caller
// (dist/gateway/upstream/json-caller.js: pool.dispatch with a handler that collects the answer's
// chunks straight from undici's HTTP parser, one timer, the caller's abort signal); passed through.
'use strict';
const http = require('node:http');
const path = require('node:path');
const { listen, UPSTREAM_CONNECTIONS } = require('./common');

const { createJsonCaller, CallSignal } = require(path.join(__dirname, '..', '..', 'dist', 'gateway', 'upstream', 'json-caller.js'));
const caller = createJsonCaller(process.env.TARGET_URL, 10_000, UPSTREAM_CONNECTIONS);
listen(
  http.createServer(async (req, res) => {
    const answer = await caller.getRaw(req.url, { requestId: 'lever', signal: new CallSignal() });
    if ('kind' in answer) {
      res.writeHead(502);
      res.end();
      return;
    }
    res.writeHead(answer.status, { 'content-type': 'application/json; charset=utf-8', 'content-length': answer.bytes.length });
    res.end(answer.bytes);
  }),
);
