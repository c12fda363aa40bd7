// Upstream lever, "after": a node:http handler calling the data service through undici's Pool,
// as the gateway's listings client does (pool.request, body.text(), JSON.parse), no framework.
'use strict';
const http = require('node:http');
const { Pool } = require('undici');
const { listen, reshape, UPSTREAM_CONNECTIONS } = require('./common');

const pool = new Pool(process.env.TARGET_URL, { connections: UPSTREAM_CONNECTIONS, keepAliveTimeout: 30_000 });
listen(
  http.createServer(async (req, res) => {
    try {
      const answer = await pool.request({ path: req.url, method: 'GET', headers: { accept: 'application/json' } });
      const body = reshape(await answer.body.text());
      res.writeHead(answer.statusCode, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body) });
      res.end(body);
    } catch {
      res.writeHead(502);
      res.end();
    }
  }),
);
