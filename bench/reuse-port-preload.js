// Loaded with `node --require` by bench/reuse-port.ts only: the gateway's public listener, bound
// as `server.listen(port, host, callback)`, is bound with `reusePort: true` instead when its port is
// BENCH_REUSE_PORT, so several gateway processes share one port and the kernel spreads the
// connections among them (SO_REUSEPORT). The gateway's code is not changed for the measure.
'use strict';
const net = require('node:net');

const port = Number(process.env.BENCH_REUSE_PORT);
const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function listenReusingPort(...args) {
  if (args[0] === port && typeof args[1] === 'string') {
    return listen.call(this, { port, host: args[1], reusePort: true }, typeof args[2] === 'function' ? args[2] : undefined);
  }
  return listen.apply(this, args);
};
