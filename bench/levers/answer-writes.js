// Send lever (bench/levers.ts): how a 200 page's head and body reach the socket. The same head the
// gateway writes (content type and length, Vary, Cache-Control, the three RateLimit fields, a
// request id) and the same 7.9 KB body from memory; MODE picks the writing:
//   writev     setHeader per field, res.end(buffer): Node writes the head (a latin1 string) and the
//              body (a Buffer) as two chunks of one corked writev (the gateway's way until now);
//   one-write  the same head, res.end(buffer.toString('latin1'), 'latin1'): Node joins head and body
//              into one string and writes it once (the body's UTF-8 bytes pass through latin1 unchanged);
//   writehead  res.writeHead(200, [name, value, ...]) and res.end(buffer): no header object.
'use strict';
const http = require('node:http');
const { readFileSync } = require('node:fs');
const { listen } = require('./common');

const body = readFileSync(process.env.PAGE_FILE);
const mode = process.env.MODE;
let n = 0;
const fields = () => [
  ['Content-Type', 'application/json; charset=utf-8'],
  ['Vary', 'Accept-Encoding'],
  ['Cache-Control', 'private, no-store'],
  ['RateLimit-Limit', '1000000000'],
  ['RateLimit-Remaining', String(999_999_999 - (n % 1000))],
  ['RateLimit-Reset', '42'],
  ['X-Request-Id', `lever-${++n}`],
];
listen(
  http.createServer((req, res) => {
    if (mode === 'writehead') {
      res.writeHead(200, [...fields().flat(), 'Content-Length', String(body.length)]);
      res.end(body);
      return;
    }
    for (const [name, value] of fields()) res.setHeader(name, value);
    res.setHeader('Content-Length', body.length);
    res.statusCode = 200;
    if (mode === 'one-write') res.end(body.toString('latin1'), 'latin1');
    else res.end(body);
  }),
);
