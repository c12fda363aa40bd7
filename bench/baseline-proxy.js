// The benchmark's baseline: a bare node:http pass-through proxy with a keep-alive agent, no
// policies. Whatever the gateway costs above this is the price of its rules.
'use strict';
const http = require('node:http');

const target = new URL(process.env.TARGET_URL || 'http://127.0.0.1:8081');
const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });
const server = http.createServer((req, res) => {
  const upstream = http.request(
    { host: target.hostname, port: target.port, path: req.url, method: req.method, headers: { accept: 'application/json' }, agent },
    (answer) => {
      res.writeHead(answer.statusCode, answer.headers);
      answer.pipe(res);
    },
  );
  upstream.on('error', () => {
    res.writeHead(502);
    res.end();
  });
  req.pipe(upstream);
});
server.keepAliveTimeout = 65_000;
server.listen(Number(process.env.PORT || 0), '127.0.0.1', () => {
  process.stdout.write(`${JSON.stringify({ msg: 'listening', port: server.address().port })}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
