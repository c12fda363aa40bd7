// Logging lever: one tiny node:http server, the same small answer in every variant; only the way
// each request is logged differs (LOGGING env). Log lines go to stdout, which the benchmark points
// at /dev/null, so what is measured is the CPU of producing and writing them, not of a reader.
//   none         no logging: the floor the others are compared with
//   pino-http    pino-http with its default options (its logger on pino's default stdout destination)
//   pino-http-gw pino-http configured to write the gateway's line (the same fields, serializers
//                that log no headers, createLogger's logger): what switching the gateway to it costs
//   gateway      the gateway's way: createLogger() from dist/gateway/logging.js (asynchronous
//                destination) and logAnswered() from dist/gateway/access-log.js, the function
//                gateway/observe.ts calls on 'close', with a request context as the gateway builds it
//   gateway-iso  the same line and destination, with the time as ISO 8601 (the format before epoch
//                ms): what formatting a date per line costs
//   per-line     the gateway's line and logger options on the destination it had before batching:
//                asynchronous, one write (a thread-pool job) per line (minLength 0)
//   sync         the gateway's line and logger options, but pino.destination({ sync: true })
'use strict';
const http = require('node:http');
const path = require('node:path');
const { randomUUID } = require('node:crypto');
const pino = require('pino');
const { listen } = require('./common');
const dist = path.join(__dirname, '..', '..', 'dist', 'gateway');
const { batchedStdout, createLogger } = require(path.join(dist, 'logging.js'));
const { accessLine, logAnswered } = require(path.join(dist, 'access-log.js'));
const { LOG_FORMAT } = require(path.join(dist, 'log-format.js'));

const BODY = JSON.stringify({ data: [], next_cursor: null });
const answer = (res) => {
  res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(BODY) });
  res.end(BODY);
};

/** The part of gateway/observe.ts's request context the line reads. */
function contextOf(req, res) {
  return { req, res, requestId: randomUUID(), clientIp: req.socket.remoteAddress ?? '', route: 'properties', key: { id: 'bench' }, started: process.hrtime.bigint() };
}
const secondsSince = (started) => Number(process.hrtime.bigint() - started) / 1e9;
const statusOf = (res) => (res.writableFinished ? res.statusCode : 499);

/** gateway/observe.ts's line, without its metrics. */
function oneLine(logger) {
  return (req, res) => {
    const ctx = contextOf(req, res);
    res.once('close', () => logAnswered(logger, ctx, statusOf(res), secondsSince(ctx.started)));
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
    case 'pino-http-gw': {
      // As cheap as pino-http allows: its own request id generator replaced by the gateway's id,
      // no header ever serialised (the request and response objects serialise to nothing: pino-http
      // binds the request to a child logger per request, which cannot be turned off), the line's
      // fields from the gateway's accessLine, level and message fixed per status.
      const CTX = Symbol('ctx');
      const line = (req, res) => accessLine(req[CTX], statusOf(res), secondsSince(req[CTX].started));
      const log = require('pino-http')({
        logger: createLogger('info'),
        wrapSerializers: false,
        serializers: {
          req: (r) => (r instanceof http.IncomingMessage ? undefined : r),
          res: (r) => (r instanceof http.ServerResponse ? undefined : r),
        },
        genReqId: (req) => req[CTX].requestId,
        customLogLevel: (req, res) => (statusOf(res) >= 500 ? 'error' : 'info'),
        customSuccessMessage: () => 'answered',
        customErrorMessage: () => 'answered',
        customSuccessObject: line,
        customErrorObject: line,
      });
      return (req, res) => {
        req[CTX] = contextOf(req, res);
        log(req, res);
        answer(res);
      };
    }
    case 'gateway':
      return oneLine(createLogger('info'));
    case 'gateway-iso':
      return oneLine(pino({ level: 'info', base: { service: 'gateway' }, ...LOG_FORMAT, timestamp: pino.stdTimeFunctions.isoTime }, batchedStdout()));
    case 'per-line':
      return oneLine(createLogger('info', pino.destination({ sync: false, minLength: 0 })));
    case 'sync':
      // createLogger's options, copied: only the destination differs.
      return oneLine(pino({ level: 'info', base: { service: 'gateway' }, ...LOG_FORMAT }, pino.destination({ dest: 1, sync: true })));
    default:
      throw new Error(`LOGGING must be none, pino-http, pino-http-gw, gateway, gateway-iso, per-line or sync, not ${mode}`);
  }
}

listen(http.createServer(handlerFor(process.env.LOGGING)));
