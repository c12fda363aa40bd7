// Shared by the lever servers (bench/levers.ts starts them, one per measured variant) and by the
// bare-page peer (bench/run.ts).
'use strict';

/**
 * Listens on a free loopback port and announces it on stderr: stdout is /dev/null, because the
 * logging servers write their log lines there and the benchmark must not pay for reading them.
 * SIGTERM closes the keep-alive connections too, so the process exits (and pino flushes) at once.
 */
exports.listen = (server) => {
  server.keepAliveTimeout = 65_000;
  server.listen(0, '127.0.0.1', () => {
    process.stderr.write(`${JSON.stringify({ msg: 'listening', port: server.address().port })}\n`);
  });
  process.on('SIGTERM', () => {
    server.close(() => process.exit(0));
    server.closeAllConnections();
  });
};

/**
 * The reshaping every upstream variant does: the data service's page `{items, next_after}` becomes
 * the public `{data, next_cursor}`. Parsing and serialising are the point: a body the gateway must
 * reshape cannot be streamed through, which is what the upstream lever is about.
 */
exports.reshape = (text) => {
  const page = JSON.parse(text);
  return JSON.stringify({ data: page.items, next_cursor: page.next_after });
};

/** Keep-alive connections to the data service, the same bound for every variant. */
exports.UPSTREAM_CONNECTIONS = 128;
