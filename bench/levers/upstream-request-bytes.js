// Upstream lever "answer handling", before: the data service's answer read as bytes the way the
// gateway's caller did until now: undici's pool.request (an AsyncResource, a Readable stream and a
// promise per answer) and the stream read whole with body.arrayBuffer(); passed through unchanged.
'use strict';
const http = require('node:http');
const { Pool } = require('undici');
const { listen, UPSTREAM_CONNECTIONS } = require('./common');

const pool = new Pool(process.env.TARGET_URL, { connections: UPSTREAM_CONNECTIONS, keepAliveTimeout: 30_000 });
listen(
  http.createServer(async (req, res) => {
    try {
      const answer = await pool.request({ path: req.url, method: 'GET', headers: { accept: 'application/json', 'x-request-id': 'lever' } });
      const bytes = Buffer.from(await answer.body.arrayBuffer());
      res.writeHead(answer.statusCode, { 'content-type': 'application/json; charset=utf-8', 'content-length': bytes.length });
      res.end(bytes);
    } catch {
      res.writeHead(502);
      res.end();
    }
  }),
);
