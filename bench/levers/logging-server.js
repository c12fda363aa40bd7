// Logging lever: one tiny node:http server, the same small answer in every variant; only the way
// each request is logged differs (LOGGING env). Log lines go to stdout, which the benchmark points
// at /dev/null, so what is measured is the CPU of producing and writing them, not of a reader.
//   none      no logging: the floor the others are compared with
//   pino-http pino-http with its default options (its logger on pino's default stdout destination)
//   gateway   the gateway's way: createLogger() from dist/gateway/logging.js (asynchronous
//             destination) and one logger.info(entry, 'answered') per request, the entry built as
//             gateway/observe.ts builds it
//   sync      the same line and logger options, but pino.destination({ sync: true })
'use strict';
const http = require('node:http');
const path = require('node:path');
const { randomUUID } = require('node:crypto');
const pino = require('pino');
const { listen } = require('./common');
const { createLogger, loggableUrl } = require(path.join(__dirname, '..', '..', 'dist', 'gateway', 'logging.js'));

const BODY = JSON.stringify({ data: [], next_cursor: null });
const answer = (res) => {
  res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(BODY) });
  res.end(BODY);
};

/** The gateway's per-request line (gateway/observe.ts), without its metrics. */
function oneLine(logger) {
  return (req, res) => {
    const started = process.hrtime.bigint();
    const requestId = randomUUID();
    res.once('close', () => {
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      logger.info(
        { request_id: requestId, method: req.method, url: loggableUrl(req.url), ip: req.socket.remoteAddress, status: res.statusCode, ms: Math.round(seconds * 1e4) / 10, key_id: 'bench' },
        'answered',
      );
    });
    answer(res);
  };
}

function handlerFor(mode) {
  switch (mode) {
    case 'none':
      return (req, res) => answer(res);
    case 'pino-http': {
      const log = require('pino-http')();
      return (req, res) => {
        log(req, res);
        answer(res);
      };
    }
    case 'gateway':
      return oneLine(createLogger('info'));
    case 'sync':
      // createLogger's options, copied: only the destination differs.
      return oneLine(pino({ level: 'info', base: { service: 'gateway' }, timestamp: pino.stdTimeFunctions.isoTime }, pino.destination({ dest: 1, sync: true })));
    default:
      throw new Error(`LOGGING must be none, pino-http, gateway or sync, not ${mode}`);
  }
}

listen(http.createServer(handlerFor(process.env.LOGGING)));
