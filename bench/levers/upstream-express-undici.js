// Upstream lever, the alternative the issue names: undici's Pool called inside an express 5 route.
// Against upstream-undici.js (the same call without express) it isolates the framework's cost.
'use strict';
const http = require('node:http');
const express = require('express');
const { Pool } = require('undici');
const { listen, reshape, UPSTREAM_CONNECTIONS } = require('./common');

const pool = new Pool(process.env.TARGET_URL, { connections: UPSTREAM_CONNECTIONS, keepAliveTimeout: 30_000 });
const app = express();
app.disable('x-powered-by');
// No ETag: the http-proxy-middleware variant copies the upstream's headers and hashes nothing, so
// hashing every body here would charge express for a feature the other side does not have.
app.set('etag', false);
app.get('/internal/v1/listings', async (req, res) => {
  const answer = await pool.request({ path: req.url, method: 'GET', headers: { accept: 'application/json' } });
  const text = await answer.body.text();
  res.status(answer.statusCode).type('application/json').send(reshape(text));
});
listen(http.createServer(app));
